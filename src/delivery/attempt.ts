/**
 * One delivery attempt for one job, end to end: locate the recipient domain's MX hosts
 * (mx.ts), apply their DANE TLSA records (dane-routing.ts) and then its MTA-STS policy
 * (sts-routing.ts, which leaves the hosts under DANE to it) to them, then talk SMTP to the best
 * reachable one (smtp-client.ts). Returns an outcome value and never throws for anything the
 * network or the receiver does. A TLS-RPT report (MessageRecord.tlsReport) skips MTA-STS, DANE
 * and TLS-RPT counting: opportunistic TLS to every MX host (RFC 8460 5.3).
 */
import type { AttemptResult } from '../domain/delivery-result.js';
import type { AbortLike } from './attempt-abort.js';
import type { DeliveryPhase } from '../domain/delivery-outcome.js';
import type { ParsedReply } from '../domain/smtp-reply.js';
import type { DeliveryJob, MessageRecord } from '../domain/types.js';
import type { Logger } from '../log/logger.js';
import type { ActiveStsPolicy } from '../mta-sts/cache.js';
import type { MxResolver } from './mx.js';
import { deliverPerRecipient } from './per-recipient.js';
import { envelopeSender } from './return-path.js';
import { deliverOverSmtp, type SmtpConnectionCache, type SmtpTimeouts } from './smtp-client.js';
import { recipientResult } from './smtp-results.js';
import { routeUnderPolicy, testingFailure, type StsPolicySource, type StsRecord } from './sts-routing.js';
import { daneVouched, routeUnderDane, type DaneHost, type DaneSource } from './dane-routing.js';
import { reportRefusedHosts, reportStsFetchFailure, tlsReporter, type ReporterInput, type TlsResultSink } from './tls-reporting.js';
import type { TlsPolicy } from './tls-policy.js';
import { reachableTargets, unreachableFamily } from './target-family.js';

export interface AttemptRequest {
  job: DeliveryJob;
  message: MessageRecord;
  /** The signed message as stored in `bodies`. */
  body: Buffer;
  /** Aborted at the attempt deadline or when shutdown's grace period is over. */
  signal: AbortLike;
  /** Awaited after the 354 reply, before the message is sent (the dispatcher's pacer). */
  beforeBody?: () => Promise<void> | undefined;
  /** Asked right before MAIL FROM: false calls the attempt off without a transaction (its channel was deleted). */
  stillWanted?: () => boolean;
  /**
   * Awaited once the MX lookup named the site, before the first connection (the dispatcher's
   * SiteConcurrency.admit): undefined or true to go on; false when the attempt was aborted while
   * it waited for room at its site, which ends it deferred without a connection.
   */
  siteRoom?: () => Promise<boolean> | undefined;
  /**
   * The source to send from (issue 35, delivery.sources): its local address and EHLO name.
   * Absent: the kernel picks the address and the EHLO name is MxAttemptDeps.heloName.
   */
  source?: { name: string; address?: string; ehloName: string };
}

/** What the dispatcher calls; tests may pass their own. */
export type AttemptFn = (req: AttemptRequest) => Promise<AttemptResult>;

export interface MxAttemptDeps {
  mx: MxResolver;
  /** delivery.port (25 in production, RFC 5321 4.5.4). */
  port: number;
  /** config.hostname, our EHLO name. */
  heloName: string;
  /** config.domains.returnPathLabel: the bounce host is `<label>.<sending domain>`. */
  returnPathLabel: string;
  /** The key of the per-recipient bounce addresses (return-path.ts): the store's tracking secret. */
  verpSecret: () => Promise<Buffer>;
  timeouts: SmtpTimeouts;
  /** The dispatcher's kept connections (it closes them in stop()). */
  cache?: SmtpConnectionCache;
  /** The messages-per-connection limit of an MX site (as MxResolver named it), when it has its own. */
  maxMessagesPerConnection?: (site: string) => number | undefined;
  /** Recipient domains' MTA-STS policies (RFC 8461); none applied when absent. */
  mtaSts?: StsPolicySource;
  /** Trusted roots for MX certificates (node's plus delivery.mtaSts.caFile); node's when it answers undefined. */
  ca?: () => string[] | undefined;
  /** Where MTA-STS testing mode reports what enforce would have refused. */
  logger?: Logger;
  /** DANE TLSA lookups of MX hosts (RFC 7672); none when absent. */
  dane?: DaneSource;
  /** TLS-RPT (RFC 8460): told each TLS negotiation's result. */
  tlsRpt?: TlsResultSink;
}

/** An attempt aborted (deadline, shutdown) while it waited for room at its site: deferred, no connection made. */
const CALLED_OFF: ParsedReply = { enhancedCode: '4.4.5', text: 'attempt ended while waiting for a free session at the MX site (per-site concurrency)' };

export function mxAttempt(deps: MxAttemptDeps): AttemptFn {
  return async (req) => {
    const { job, message } = req;
    const { resolution: route, site } = await deps.mx.locate(job.domain);
    if (route.status === 'failed') return refused(job, route.reply, 'dns');
    if ((await req.siteRoom?.()) === false) return refused(job, CALLED_OFF, 'connect');
    // RFC 8460 5.3: a TLS-RPT report MUST be delivered despite TLS failures (so not held to the
    // MTA-STS policy or the TLSA records of its rua domain: opportunistic TLS, any certificate,
    // plain text after a failed STARTTLS), and its session SHOULD NOT be in the next report.
    if (message.tlsReport) return send(deps, req, site, route.hosts, {});
    const { policy, fetchFailure } = (await deps.mtaSts?.lookup(job.domain)) ?? { policy: null };
    const report = deps.tlsRpt && { sink: deps.tlsRpt, domain: job.domain, policy, sts: deps.mtaSts };
    if (report && fetchFailure) reportStsFetchFailure(report, fetchFailure);
    // DANE before MTA-STS (RFC 8461 2): a host under DANE that a validated MX RRset names needs no place in the policy (sts-routing.ts).
    const dane = deps.dane ? await routeUnderDane(job.domain, route.hosts, deps.dane) : undefined;
    if (dane && report) reportRefusedHosts(report, dane.skipped, 'dnssec-invalid');
    if (dane && !dane.ok) return { ...refused(job, dane.reply, 'tls'), mtaSts: policy ? { mode: policy.mode, id: policy.id } : undefined };
    const hosts = dane?.hosts ?? route.hosts;
    const vouched = policy && policy.mode !== 'none' ? await vouchedHosts(deps, job.domain, hosts, policy) : NONE_VOUCHED;
    const sts = deps.mtaSts ? routeUnderPolicy(job.domain, hosts, policy, deps.mtaSts, vouched) : undefined;
    if (sts && !sts.ok && report) reportRefusedHosts(report, hosts.map((h) => ({ host: h.host, reason: sts.reply.text })), 'validation-failure');
    if (sts && !sts.ok) return { ...refused(job, sts.reply, 'tls'), mtaSts: sts.record };
    const result = await send(deps, req, site, sts?.hosts ?? hosts, { tlsPolicy: sts?.tlsPolicy, report });
    if (!sts?.ok || !sts.record) return result;
    return withStsRecord(result, sts.record, sts.outsidePolicy, job.domain, deps.logger);
  };
}

/** No host, without an await: the attempt of a domain without a policy (nearly every one) waits for nothing more. */
const NONE_VOUCHED: ReadonlySet<string> = new Set();

/** The hosts under DANE that may go where the domain's MTA-STS policy does not name them (dane-routing.ts daneVouched). */
function vouchedHosts(deps: MxAttemptDeps, domain: string, hosts: DaneHost[], policy: ActiveStsPolicy): Promise<ReadonlySet<string>> {
  const { dane, mtaSts } = deps;
  if (!dane || !mtaSts) return Promise.resolve(NONE_VOUCHED);
  return daneVouched(domain, hosts, dane, (host) => mtaSts.mxAllowed(policy, host));
}

/**
 * The SMTP part of the attempt: the hosts in order, at the policy's TLS level, each new TLS
 * session told to TLS-RPT when `report` is given; one transaction per recipient, each with its
 * own bounce address (per-recipient.ts).
 */
async function send(deps: MxAttemptDeps, req: AttemptRequest, site: string | undefined, hosts: DaneHost[], o: { tlsPolicy?: TlsPolicy; report?: ReporterInput }): Promise<AttemptResult> {
  const { job, message, body, signal, beforeBody, stillWanted } = req;
  const all = hosts.flatMap((h) => h.addresses.map((address) => ({ host: h.host, address, dane: h.dane })));
  const targets = reachableTargets(all, req.source?.address);
  if (targets.length === 0 && all.length > 0 && req.source?.address !== undefined) return refused(job, unreachableFamily(job.domain, { name: req.source.name, address: req.source.address }), 'connect');
  const sender = { secret: await deps.verpSecret(), returnPathLabel: deps.returnPathLabel };
  // A report's session is neither taken from nor kept for other mail: a later message over it
  // would not be counted in TLS-RPT either (kept connections are not new negotiations).
  const cache = message.tlsReport ? undefined : deps.cache;
  const onTlsNegotiation = o.report && tlsReporter(o.report);
  return deliverPerRecipient(job.recipients, (recipient) =>
    deliverOverSmtp({
      targets,
      port: deps.port,
      heloName: req.source?.ehloName ?? deps.heloName,
      sourceAddress: req.source?.address,
      sender: envelopeSender(message, recipient, sender),
      recipients: [recipient],
      body,
      timeouts: deps.timeouts,
      cache,
      maxMessagesPerConnection: site === undefined ? undefined : deps.maxMessagesPerConnection?.(site),
      signal,
      beforeBody,
      stillWanted,
      tlsPolicy: o.tlsPolicy,
      ca: deps.ca?.(),
      onTlsNegotiation,
    }),
  );
}

/** Every recipient gets the reply of a failure before any connection (DNS, MTA-STS, DANE). */
function refused(job: DeliveryJob, reply: ParsedReply, phase: DeliveryPhase): AttemptResult {
  const results = job.recipients.map((r) => recipientResult(r, reply, phase));
  return { recipients: results, tls: false, smtpCode: reply.code, enhancedCode: reply.enhancedCode, response: reply.text };
}

/** The attempt's MTA-STS record: why enforce failed it, or what enforce would have refused under testing (logged). */
function withStsRecord(result: AttemptResult, record: StsRecord, outsidePolicy: string[], domain: string, logger: Logger | undefined): AttemptResult {
  const failure = record.mode === 'testing' ? testingFailure(result, outsidePolicy) : record.mode === 'enforce' && result.tlsDetail === undefined ? result.response : undefined;
  if (failure && record.mode === 'testing') logger?.warn({ domain, policyId: record.id, mx: result.mx, failure }, 'MTA-STS testing: enforce would have refused this delivery');
  // Object.assign, not {...result, mtaSts}: the result has no such field, and a literal adding one
  // to its spread costs V8 new hidden classes on every call (bench/RESULTS.md, issue 36).
  return Object.assign({}, result, { mtaSts: failure ? { ...record, failure } : record });
}
