/**
 * One delivery attempt for one job, end to end: locate the recipient domain's MX hosts
 * (mx.ts), apply its MTA-STS policy to them (sts-routing.ts), then talk SMTP to the best
 * reachable one (smtp-client.ts). Returns an outcome value and never throws for anything the
 * network or the receiver does.
 */
import type { AttemptResult } from '../domain/delivery-result.js';
import type { DeliveryJob, MessageRecord } from '../domain/types.js';
import type { Logger } from '../log/logger.js';
import type { MxResolver } from './mx.js';
import { envelopeSender } from './return-path.js';
import { deliverOverSmtp, type SmtpConnectionCache, type SmtpTimeouts } from './smtp-client.js';
import { recipientResult } from './smtp-results.js';
import { routeUnderPolicy, testingFailure, type StsPolicySource } from './sts-routing.js';
import { tlsReporter, type TlsResultSink } from './tls-reporting.js';

export interface AttemptRequest {
  job: DeliveryJob;
  message: MessageRecord;
  /** The signed message as stored in `bodies`. */
  body: Buffer;
  /** Aborted at the attempt deadline or when shutdown's grace period is over. */
  signal: AbortSignal;
  /** Awaited after the 354 reply, before the message is sent (the dispatcher's pacer). */
  beforeBody?: () => Promise<void> | undefined;
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
  /** TLS-RPT (RFC 8460): told each TLS negotiation's result. */
  tlsRpt?: TlsResultSink;
  /** The max_age of the domain's stored MTA-STS policy, for TLS-RPT's policy-string. */
  stsMaxAge?: (domain: string) => number | undefined;
}

export function mxAttempt(deps: MxAttemptDeps): AttemptFn {
  return async ({ job, message, body, signal, beforeBody }) => {
    const { resolution: route, site } = await deps.mx.locate(job.domain);
    if (route.status === 'failed') {
      const results = job.recipients.map((r) => recipientResult(r, route.reply, 'dns'));
      return { recipients: results, tls: false, smtpCode: route.reply.code, enhancedCode: route.reply.enhancedCode, response: route.reply.text };
    }
    const policy = (await deps.mtaSts?.policyFor(job.domain)) ?? null;
    const sts = deps.mtaSts ? routeUnderPolicy(job.domain, route.hosts, policy, deps.mtaSts) : undefined;
    if (sts && !sts.ok) {
      const results = job.recipients.map((r) => recipientResult(r, sts.reply, 'tls'));
      return { recipients: results, tls: false, mtaSts: sts.record, enhancedCode: sts.reply.enhancedCode, response: sts.reply.text };
    }
    const hosts = sts?.hosts ?? route.hosts;
    const targets = hosts.flatMap((h) => h.addresses.map((address) => ({ host: h.host, address })));
    const result = await deliverOverSmtp({
      targets,
      port: deps.port,
      heloName: deps.heloName,
      sender: envelopeSender(message, deps.returnPathLabel),
      recipients: job.recipients,
      body,
      timeouts: deps.timeouts,
      cache: deps.cache,
      maxMessagesPerConnection: site === undefined ? undefined : deps.maxMessagesPerConnection?.(site),
      signal,
      beforeBody,
      tlsPolicy: sts?.tlsPolicy,
      ca: deps.ca?.(),
      onTlsNegotiation: deps.tlsRpt && tlsReporter({ sink: deps.tlsRpt, domain: job.domain, policy, sts: deps.mtaSts, maxAge: policy ? deps.stsMaxAge?.(job.domain) : undefined }),
    });
    if (!sts?.record) return result;
    const failure = sts.record.mode === 'testing' ? testingFailure(result, sts.outsidePolicy) : sts.record.mode === 'enforce' && result.tlsDetail === undefined ? result.response : undefined;
    if (failure && sts.record.mode === 'testing') deps.logger?.warn({ domain: job.domain, policyId: sts.record.id, mx: result.mx, failure }, 'MTA-STS testing: enforce would have refused this delivery');
    return { ...result, mtaSts: failure ? { ...sts.record, failure } : sts.record };
  };
}
