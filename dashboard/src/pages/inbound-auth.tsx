import type { ComponentChildren } from 'preact';
import { StatusBadge } from '../components/status-badge';
import type { InboundAuthJson } from '../wire';

/**
 * The verdicts GET /inbound/messages/{id} answers in `auth` (the wire's InboundAuthJson), in the
 * result names of Authentication-Results (RFC 8601 2.7), each said in plain words beside its
 * badge; every part is read as optional, so a missing one shows as nothing rather than an error.
 */
type Verdicts = Partial<InboundAuthJson>;

/** RFC 7208 2.6: what each SPF result says about the client that sent the message. */
function spfWords(v: NonNullable<Verdicts['spf']>): string {
  const d = v.domain ?? 'the sender domain';
  const words: Record<string, string> = {
    pass: `the sending server may send mail for ${d}`,
    fail: `${d} says the sending server may not send its mail`,
    softfail: `${d} says the sending server is probably not one of its own`,
    neutral: `${d} makes no statement about the sending server`,
    none: `${d} publishes no SPF record`,
    temperror: 'could not be checked: DNS did not answer in time',
    permerror: `the SPF record of ${d} is broken`,
  };
  return words[v.result] ?? v.result;
}

/** RFC 6376 6.1: one signature's result. */
function dkimWords(s: NonNullable<Verdicts['dkim']>[number]): string {
  const key = `${s.selector}._domainkey.${s.domain}`;
  const words: Record<string, string> = {
    pass: `signed by ${s.domain}, and the signature verifies (key ${key})`,
    fail: `signed by ${s.domain}, but the message was changed after signing`,
    permerror: `signed by ${s.domain}, but there is no usable key at ${key}`,
    temperror: `signed by ${s.domain}; its key could not be fetched now`,
  };
  return words[s.result] ?? `signed by ${s.domain}, not evaluated (${s.result})`;
}

/** RFC 7489 6.3: what the From domain's policy asks a receiver to do with failing mail. */
const POLICY_WORDS: Record<string, string> = { none: 'only to report it', quarantine: 'to treat it as spam', reject: 'to reject it' };

/** RFC 7489: does the From domain's SPF or DKIM result pass and align with it. */
function dmarcWords(v: NonNullable<Verdicts['dmarc']>): string {
  const d = v.domain ?? 'the From domain';
  const policy = v.policy ? `; its policy asks ${POLICY_WORDS[v.policy] ?? v.policy} when this fails` : '';
  const words: Record<string, string> = {
    pass: `the From domain ${d} is confirmed by a passing SPF or DKIM result of its own${policy}`,
    fail: `neither SPF nor DKIM confirms the From domain ${d}${policy}`,
    none: `the From domain ${d} publishes no DMARC policy`,
    temperror: 'could not be checked: DNS did not answer in time',
    permerror: 'could not be evaluated: the From field does not hold exactly one address, or the policy is broken',
  };
  return words[v.result] ?? v.result;
}

/** RFC 8617: the chain of forwarders that sealed the message on its way. */
const ARC_WORDS: Record<string, string> = {
  pass: 'forwarded by hosts that sealed it, and their ARC chain verifies',
  fail: 'the ARC chain of its forwarders is broken',
  none: 'no ARC chain: no forwarder sealed it',
};

function Verdict(props: { name: string; result: string; children: ComponentChildren }) {
  return (
    <div>
      <dt>{props.name}</dt>
      <dd>
        <StatusBadge status={props.result} /> {props.children}
      </dd>
    </div>
  );
}

/** The SPF, DKIM (every signature), DMARC and ARC verdicts of a message, or why there are none yet. */
export function AuthVerdicts(props: { auth: InboundAuthJson | null }) {
  if (!props.auth) return <p class="muted">Not verified yet: the message is checked right after it is received.</p>;
  const v: Verdicts = props.auth;
  const dkim = v.dkim ?? [];
  return (
    <>
      {v.problem && <p class="banner banner-warn">Verification could not run: {v.problem}</p>}
      <dl class="summary auth-verdicts">
        {v.spf && <Verdict name="SPF" result={v.spf.result}>{spfWords(v.spf)}</Verdict>}
        {dkim.length === 0 ? (
          <Verdict name="DKIM" result="none">
            the message carries no DKIM signature
          </Verdict>
        ) : (
          dkim.map((s, i) => (
            <Verdict key={i} name={dkim.length > 1 ? `DKIM ${i + 1}` : 'DKIM'} result={s.result}>
              {dkimWords(s)}
            </Verdict>
          ))
        )}
        {v.dmarc && <Verdict name="DMARC" result={v.dmarc.result}>{dmarcWords(v.dmarc)}</Verdict>}
        {v.arc && <Verdict name="ARC" result={v.arc.result}>{ARC_WORDS[v.arc.result] ?? v.arc.result}</Verdict>}
      </dl>
    </>
  );
}
