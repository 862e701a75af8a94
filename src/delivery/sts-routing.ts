/**
 * A recipient domain's MTA-STS policy (RFC 8461, src/mta-sts/) applied to its MX hosts before
 * delivery:
 *  - `enforce` (RFC 8461 5): only MX hosts the policy names are used; none left is a temporary
 *    failure (4.7.5), never a delivery elsewhere; the hosts left are reached with TLS required
 *    and a verified certificate for the MX name (tls-policy.ts `verify`), no plain-text fallback.
 *  - `testing` (RFC 8461 5): every host is used with opportunistic TLS, and what enforce would
 *    have refused (a host not in the policy, plain text, a certificate that does not verify) is
 *    logged and recorded in the attempt (`mtaSts.failure`), not acted upon.
 *  - `none` or no policy: opportunistic TLS.
 * A host under DANE (its validated TLSA records make TLS mandatory, dane-routing.ts, which runs
 * first) is reached at TLS level `dane` (smtp-client.ts) in either mode, its TLSA match deciding
 * and never passed by the policy: DANE takes precedence over MTA-STS (RFC 8461 2; as Postfix and
 * KumoMTA). It is used even when the policy does not name it if a DNSSEC-validated MX RRset does
 * (`daneVouched`, dane-routing.ts): then DNSSEC, not the policy's mx list, authenticated the name.
 */
import type { AttemptResult } from '../domain/delivery-result.js';
import type { ParsedReply } from '../domain/smtp-reply.js';
import type { ActiveStsPolicy, StsLookup } from '../mta-sts/cache.js';
import type { DaneHost } from './dane-routing.js';
import { OPPORTUNISTIC, type TlsPolicy } from './tls-policy.js';

/** What delivery needs of MtaStsPolicies (src/mta-sts/cache.ts). */
export interface StsPolicySource {
  /** The policy in force (routed under here), and why an announced one is missing (told to TLS-RPT). */
  lookup(domain: string): Promise<StsLookup>;
  mxAllowed(policy: Pick<ActiveStsPolicy, 'mx'>, mxHost: string): boolean;
}

export type StsRecord = NonNullable<AttemptResult['mtaSts']>;

export type StsRouting =
  | { ok: true; hosts: DaneHost[]; tlsPolicy: TlsPolicy; record?: StsRecord; outsidePolicy: string[] }
  | { ok: false; reply: ParsedReply; record: StsRecord };

/** `daneVouched`: the hosts under DANE that a validated MX RRset names, used whether or not the policy names them. */
export function routeUnderPolicy(domain: string, hosts: DaneHost[], policy: ActiveStsPolicy | null, source: StsPolicySource, daneVouched: ReadonlySet<string>): StsRouting {
  if (!policy) return { ok: true, hosts, tlsPolicy: OPPORTUNISTIC, outsidePolicy: [] };
  const record: StsRecord = { mode: policy.mode, id: policy.id };
  if (policy.mode === 'none') return { ok: true, hosts, tlsPolicy: OPPORTUNISTIC, record, outsidePolicy: [] };
  const outsidePolicy = hosts.filter((h) => !daneVouched.has(h.host) && !source.mxAllowed(policy, h.host)).map((h) => h.host);
  if (policy.mode === 'testing') return { ok: true, hosts, tlsPolicy: { mode: 'mta-sts-testing', id: policy.id }, record, outsidePolicy };
  const allowed = hosts.filter((h) => !outsidePolicy.includes(h.host));
  if (allowed.length === 0) {
    const text = `No MX host of ${domain} matches its MTA-STS policy (enforce, id ${policy.id}): ${outsidePolicy.join(', ')} not in ${policy.mx.join(', ')}`;
    return { ok: false, reply: { enhancedCode: '4.7.5', text }, record: { ...record, failure: text } };
  }
  return { ok: true, hosts: allowed, tlsPolicy: { mode: 'mta-sts-enforce', id: policy.id }, record, outsidePolicy };
}

/** Under `testing`: what `enforce` would have refused in this attempt, or undefined. */
export function testingFailure(result: AttemptResult, outsidePolicy: readonly string[]): string | undefined {
  if (result.mx === undefined || result.reused === undefined) return undefined; // no session with any host
  if (outsidePolicy.includes(result.mx)) return `MX host ${result.mx} is not in the policy`;
  if (result.tlsDetail?.dane !== undefined) return undefined; // held to its TLSA records, not to the policy's certificate check
  if (!result.tls) return `no TLS with ${result.mx}: ${result.tlsDetail?.reason ?? 'plain text'}`;
  if (result.tlsDetail?.verified === false) return `certificate of ${result.mx} does not verify: ${result.tlsDetail.verifyError ?? 'unknown'}`;
  return undefined;
}
