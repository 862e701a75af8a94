/**
 * Delivery's TLS negotiations told to TLS-RPT (RFC 8460; src/tls-rpt/): one result per new
 * connection to an MX host of the attempt, under the policy it was held to: `sts` when the
 * recipient domain has an MTA-STS policy in `enforce` or `testing` (the policy's lines and the MX
 * pattern that matched, RFC 8460 4.4), `tlsa` for a host whose TLSA records made TLS mandatory
 * (DANE wins over MTA-STS, RFC 8461 2), else `no-policy-found`. MX hosts refused before any
 * connection (a failed TLSA lookup, no MX in an enforce policy) are told too (reportRefusedHosts),
 * and so is an MTA-STS policy the domain announced but that could not be had (reportStsFetchFailure).
 */
import type { ActiveStsPolicy, StsFetchFailure } from '../mta-sts/cache.js';
import type { TlsPolicy as ReportPolicy, TlsResultInput } from '../domain/tls-rpt.js';
import type { Target } from './smtp-results.js';
import type { StsPolicySource } from './sts-routing.js';
import type { TlsOutcome } from './tls-outcome.js';

/** What TLS-RPT offers delivery (TlsRptService.recordTlsResult). */
export interface TlsResultSink {
  recordTlsResult(input: TlsResultInput): void;
}

export interface ReporterInput {
  sink: TlsResultSink;
  domain: string;
  policy: ActiveStsPolicy | null;
  sts?: StsPolicySource;
}

export function tlsReporter(o: ReporterInput): (target: Target, outcome: TlsOutcome) => void {
  return (target, outcome) => {
    const policy = reportPolicy(o, target);
    const result: TlsResultInput['result'] = outcome.ok
      ? 'success'
      : { type: outcome.type, receivingMxHostname: target.host, receivingIp: target.address, failureReasonCode: outcome.reason.slice(0, 200) };
    o.sink.recordTlsResult({ policyDomain: o.domain, policy, result });
  };
}

/**
 * MX hosts refused before any connection, one result each (each would have been a session):
 *  - `dnssec-invalid` under policy `tlsa` when the host's TLSA lookup failed (SERVFAIL, bogus;
 *    RFC 8460 4.3.2.1: no valid records were returned from the recursive resolver);
 *  - `validation-failure` under the `sts` policy when no MX host matched an `enforce` policy:
 *    RFC 8460 has no result type for an MX outside the policy's mx list, and 4.3.3 says a
 *    failure that fits no category SHOULD be reported as `validation-failure`.
 */
export function reportRefusedHosts(o: ReporterInput, hosts: { host: string; reason: string }[], type: 'dnssec-invalid' | 'validation-failure'): void {
  for (const h of hosts) {
    const policy: ReportPolicy = type === 'dnssec-invalid' ? { type: 'tlsa', mxHost: h.host } : reportPolicy(o, { host: h.host, address: '' });
    const failure = { type, receivingMxHostname: h.host, failureReasonCode: h.reason.slice(0, 200) };
    o.sink.recordTlsResult({ policyDomain: o.domain, policy, result: failure });
  }
}

/** RFC 8460 4.3.2.2, the MTA-STS-specific policy failures, for each way the policy was missing. */
const FETCH_RESULT = { fetch: 'sts-policy-fetch-error', invalid: 'sts-policy-invalid', webpki: 'sts-webpki-invalid' } as const;

/**
 * An attempt made without the MTA-STS policy its domain announced (`_mta-sts` TXT with a new id)
 * because the policy could not be fetched, did not authenticate, or did not validate: one failure
 * per attempt, the attempt's sessions being held to less than the domain asked for. Told under
 * policy-type `sts` (RFC 8460 4.4): the failure types of 4.3.2.2 are MTA-STS policy failures, and
 * `no-policy-found` would say the domain published no policy, which it did. With a cached policy
 * still in force (RFC 8461 5.1) the entry carries that policy's lines; without one there is no
 * applied policy to put in policy-string, so it has none. No receiving-mx-hostname either: the
 * failure is the policy host's, before any MX is chosen.
 */
export function reportStsFetchFailure(o: ReporterInput, failure: StsFetchFailure): void {
  const policy: ReportPolicy = o.policy ? { type: 'sts', string: policyLines(o.policy) } : { type: 'sts' };
  const result = { type: FETCH_RESULT[failure.kind], failureReasonCode: failure.reason.slice(0, 200) };
  o.sink.recordTlsResult({ policyDomain: o.domain, policy, result });
}

function policyLines(p: ActiveStsPolicy): string[] {
  return ['version: STSv1', `mode: ${p.mode}`, ...p.mx.map((m) => `mx: ${m}`), `max_age: ${p.maxAge}`];
}

function reportPolicy(o: ReporterInput, target: Target): ReportPolicy {
  const mxHost = target.host;
  const dane = target.dane;
  if (dane && 'records' in dane) {
    const records = dane.records.map((r) => `${r.usage} ${r.selector} ${r.matchingType} ${r.data.toString('hex')}`);
    return { type: 'tlsa', string: records, mxHost };
  }
  const p = o.policy;
  if (!p || p.mode === 'none') return { type: 'no-policy-found' };
  const matched = p.mx.find((pattern) => o.sts?.mxAllowed({ mx: [pattern] }, mxHost));
  return { type: 'sts', string: policyLines(p), mxHost: matched ?? mxHost };
}
