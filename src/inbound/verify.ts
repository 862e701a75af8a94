/**
 * The authentication verdicts of one received message, as mailauth finds them:
 *  - SPF (RFC 7208) for the client address, with the MAIL FROM domain as identity, or with the
 *    HELO name when MAIL FROM is empty (RFC 7208 2.4);
 *  - every DKIM signature (RFC 6376), each with its domain, selector and result (up to
 *    MAX_DKIM_SIGNATURES, signature-fields.ts);
 *  - DMARC (RFC 7489) with the policy the From domain publishes, over the SPF and DKIM results;
 *  - the ARC chain (RFC 8617).
 * Results use the names of Authentication-Results (RFC 8601 2.7).
 *
 * DNS goes through postrider's resolver (auth-resolver.ts), bounded per message. Whatever DNS or
 * the message does, the answer is a set of verdicts: a key that does not exist is a `permerror`
 * (RFC 6376 6.1.2), DNS that fails or runs out of time a `temperror`, and a verifier that throws
 * makes every verdict `temperror` with the reason in `problem`.
 */
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { AuthenticateResult, DKIMResult } from 'mailauth';
import { authResolver, type AuthDns } from './auth-resolver.js';
import { capSignatureFields } from './signature-fields.js';

export type { ArcResult, AuthVerdicts, DkimResult, DmarcResult, SpfResult } from '../domain/auth-verdicts.js';
import type { ArcResult, AuthVerdicts, DkimResult, DmarcResult, SpfResult } from '../domain/auth-verdicts.js';

export interface VerifyInput {
  raw: Buffer;
  /** The SMTP client's IP address. */
  clientAddress: string;
  /** The name the client gave in EHLO/HELO. */
  helo: string;
  /** The envelope sender; '' for the null reverse-path of bounces. */
  mailFrom: string;
  resolver: AuthDns;
  /** Queries per message at most (default 40). */
  maxLookups?: number;
  /** Time for every lookup of the message together, in ms (default 20 s). */
  timeoutMs?: number;
  now?: () => number;
}

const DEFAULT_MAX_LOOKUPS = 40;
const DEFAULT_TIMEOUT_MS = 20_000;

/**
 * mailauth, imported on first use: its module graph (joi, undici; 0.13-0.3 s of this thread) was
 * loaded at every start of the daemon, inbound mail or not. The inbound poster starts the import
 * when it starts, so the first received message does not hold the thread for it. Node keeps it loaded.
 */
export function loadVerifier(): Promise<typeof import('mailauth')> {
  return import('mailauth');
}

/** Verifies `raw` as received from `clientAddress`; never throws. */
export async function verifyMessage(input: VerifyInput): Promise<AuthVerdicts> {
  const now = input.now ?? Date.now;
  const resolver = authResolver(input.resolver, {
    maxLookups: input.maxLookups ?? DEFAULT_MAX_LOOKUPS,
    deadline: now() + (input.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    now,
  });
  try {
    const { authenticate } = await loadVerifier();
    const result = await authenticate(Readable.from(turnByTurn(capSignatureFields(input.raw))), {
      ip: input.clientAddress,
      helo: input.helo,
      sender: input.mailFrom,
      // The name mailauth writes into Authentication-Results comments, which we do not keep; a
      // fixed one spares it os.hostname().
      mta: 'postrider',
      resolver: resolver as never,
      // BIMI (logo display) is a mailbox provider's matter, not a verdict an application needs.
      disableBimi: true,
    });
    return verdicts(result);
  } catch (err) {
    return unverified(err instanceof Error ? err.message : String(err));
  }
}

/** Bytes handed to the verifier per turn of the event loop. */
const CHUNK_BYTES = 64 * 1024;

/**
 * The message in chunks, one per turn of the event loop. mailauth cuts a Buffer into 64 KiB
 * chunks too, but takes each in the same macrotask as the one before (its write callbacks settle
 * as promises), so a 34 MB message held the main thread for 75-210 ms in one stretch (its
 * line-break scan and body hashes); with a turn between chunks the longest stretch was 7-12 ms.
 */
async function* turnByTurn(raw: Buffer): AsyncGenerator<Buffer> {
  for (let at = 0; at < raw.length; at += CHUNK_BYTES) {
    if (at > 0) await nextTurn();
    yield raw.subarray(at, at + CHUNK_BYTES);
  }
}

function verdicts(result: AuthenticateResult): AuthVerdicts {
  const spf = result.spf || undefined;
  return {
    spf: { result: spfResult(spf?.status.result), domain: spf?.domain ?? null },
    dkim: (result.dkim?.results ?? []).filter((r) => r.signingDomain).map(dkimVerdict),
    dmarc: dmarcVerdict(result),
    arc: { result: arcResult(result.arc ? result.arc.status.result : 'none') },
  };
}

/** Every verdict `temperror`: nothing could be evaluated (RFC 8601 2.7: a transient failure). */
function unverified(problem: string): AuthVerdicts {
  return {
    spf: { result: 'temperror', domain: null },
    dkim: [],
    dmarc: { result: 'temperror', domain: null, policy: null },
    arc: { result: 'none' },
    problem,
  };
}

function spfResult(result: string | undefined): SpfResult {
  if (result === 'temperr') return 'temperror';
  const known: readonly string[] = ['none', 'neutral', 'pass', 'fail', 'softfail', 'temperror', 'permerror'];
  return result !== undefined && known.includes(result) ? (result as SpfResult) : 'none';
}

/**
 * What mailauth calls `neutral` but RFC 6376 6.1 makes a PERMFAIL, in RFC 8601 2.7.1's words: a
 * body that does not match its hash failed verification (6.1.3, `fail`); a key that is missing or
 * unusable leaves the signature unverifiable (6.1.2, "no key for signature": `permerror`).
 */
const NEUTRAL_AS = new Map<string, DkimResult>([
  ['body hash did not verify', 'fail'],
  ['no key', 'permerror'],
  ['invalid public key', 'permerror'],
  ['unknown key version', 'permerror'],
  ['unknown key type', 'permerror'],
]);
const DKIM_RESULTS: readonly string[] = ['none', 'pass', 'fail', 'policy', 'neutral', 'temperror', 'permerror'];

function dkimVerdict(r: DKIMResult): AuthVerdicts['dkim'][number] {
  const status = r.status.result === 'temperr' ? 'temperror' : r.status.result;
  const mapped = status === 'neutral' ? NEUTRAL_AS.get(r.status.comment ?? '') : undefined;
  const result = mapped ?? (DKIM_RESULTS.includes(status) ? (status as DkimResult) : 'neutral');
  return { domain: r.signingDomain, selector: r.selector ?? '', result };
}

/**
 * DMARC needs exactly one author domain (RFC 7489 6.6.1): a message without From, or with
 * several addresses in it, cannot be evaluated, which mailauth leaves unsaid and we call
 * `permerror`, so that a second From address cannot turn a failing message into `none`.
 */
function dmarcVerdict(result: AuthenticateResult): AuthVerdicts['dmarc'] {
  if ((result.dkim?.headerFrom ?? []).length !== 1) return { result: 'permerror', domain: null, policy: null };
  if (!result.dmarc) return { result: 'none', domain: null, policy: null };
  const status = result.dmarc.status.result === 'temperr' ? 'temperror' : result.dmarc.status.result;
  const known: readonly string[] = ['none', 'pass', 'fail', 'temperror', 'permerror'];
  return {
    result: known.includes(status) ? (status as DmarcResult) : 'none',
    domain: result.dmarc.domain ?? null,
    policy: result.dmarc.policy || null,
  };
}

function arcResult(result: string): ArcResult {
  return result === 'pass' || result === 'fail' ? result : 'none';
}
