/**
 * What the inbound listener does with mail for the return-path hosts: who may be a recipient
 * (no open relay), and how a received message becomes events and suppressions.
 *
 *  - `bounces+<messageId>@<label>.<domain>` (the VERP envelope sender of delivery/return-path.ts):
 *    DSNs (RFC 3464) become `bounced` events, hard ones a suppression (reason bounce); feedback
 *    reports (RFC 5965) sent there become `complained` events and suppressions (reason complaint).
 *  - `unsub-<id>-<mac>@<label>.<domain>` (the List-Unsubscribe mailto of broadcast mail, RFC 2369
 *    3.2): unsubscribes as the one-click URL does.
 *  - any other local part at a return-path host of a registered domain (an address registered
 *    with a provider's feedback loop, say): reports are matched by every key they carry
 *    (report-match.ts: VERP addresses, our Message-ID, the client's Message-ID).
 * At most one `bounced` and one `complained` event per message and recipient come from reports
 * (store/engagement.ts): a repeated report is a no-op, logged at debug.
 * A report we cannot match (or whose recipient we cannot tell) is accepted, since we are the
 * final destination for these hosts and a bounce of a bounce would only add noise (RFC 3464 4:
 * no DSN about a DSN), but never silently: it is logged (warn, with its keys) and counted in
 * postrider_inbound_reports_unmatched_total.
 */
import type { Logger } from 'pino';
import { definedOnly } from '../domain/defined.js';
import { fieldValue } from '../domain/raw-headers.js';
import { verifyUnsubscribeLocalPart } from '../domain/tracking-token.js';
import type { Metrics } from '../log/metrics.js';
import { recordAsyncBounce, recordComplaint, recordUnsubscribe, subjectOf } from '../store/engagement.js';
import type { Store } from '../store/env.js';
import { getMessage } from '../store/messages.js';
import { trackingSecret } from '../store/secrets.js';
import { feedbackReport, type FeedbackReport } from './arf.js';
import { dsnBounces } from './dsn.js';
import { hostOf, ReportMatcher, verpMessageId, type ReportKeys } from './report-match.js';
import { findReport, originalHeaders, addressOf, type Report } from './report.js';

export interface Envelope {
  mailFrom: string;
  rcptTo: string[];
}

export interface Outcome {
  /**
   * unmatched: a report about no message we know (or no recipient of it); logged and counted.
   * duplicate: a report about recipients that already have that report's event.
   */
  kind: 'bounce' | 'complaint' | 'unsubscribe' | 'ignored' | 'unmatched' | 'duplicate';
  messageId?: string;
  recipients: string[];
}

export interface InboundDeps {
  store: Store;
  returnPathLabel: string;
  /** Where unmatched reports are counted (postrider_inbound_reports_unmatched_total). */
  metrics?: Pick<Metrics, 'recordUnmatchedReport'>;
  /** Where unmatched reports are logged (warn, with the report's keys); repeated ones at debug. */
  logger?: Pick<Logger, 'warn' | 'debug'>;
}

type ReportKind = 'arf' | 'dsn';

export class InboundProcessor {
  private readonly matcher: ReportMatcher;

  constructor(private readonly deps: InboundDeps) {
    this.matcher = new ReportMatcher(deps);
  }

  /** RCPT TO check: only our return-path hosts; everything else is relaying and refused. */
  accepts(address: string): boolean {
    const at = address.lastIndexOf('@');
    if (at <= 0) return false;
    const local = address.slice(0, at);
    const host = hostOf(address);
    const verp = verpMessageId(local) ?? this.unsubscribeMessageId(local);
    if (verp && this.matcher.atHost(getMessage(this.deps.store, verp.toLowerCase()), new Set([host]))) return true;
    return this.matcher.ownsBounceHost(host);
  }

  async process(env: Envelope, raw: Buffer): Promise<Outcome> {
    for (const rcpt of env.rcptTo) {
      const id = this.unsubscribeMessageId(rcpt.slice(0, rcpt.lastIndexOf('@')));
      if (id) return this.unsubscribe(id, env);
    }
    const report = findReport(raw);
    if (!report) return { kind: 'ignored', recipients: [] };
    if (report.reportType === 'feedback-report') return this.complaint(report, env);
    if (report.reportType === 'delivery-status') return this.bounce(report, env);
    return { kind: 'ignored', recipients: [] };
  }

  /** RFC 5965: a complaint about one recipient of the matched message. */
  private async complaint(report: Report, env: Envelope): Promise<Outcome> {
    const fb = feedbackReport(report);
    const keys = reportKeys(report, fb);
    if (!fb) return this.unmatched('arf', keys, env, 'no feedback-report part');
    // RFC 5965 7.3: "not-spam" reports the opposite of a complaint.
    if (fb.feedbackType === 'not-spam') return { kind: 'ignored', recipients: [] };
    const found = this.matcher.match(keys, env.rcptTo);
    if (!found.message) return this.unmatched('arf', keys, env, found.reason);
    const m = found.message;
    const named = keys.recipient;
    const recipients = named && m.recipients.includes(named) ? [named] : m.recipients.length === 1 ? m.recipients : [];
    if (recipients.length === 0) return this.unmatched('arf', keys, env, 'no recipient of the message named', m.id);
    const details = definedOnly({ feedbackType: fb.feedbackType, userAgent: fb.userAgent, sourceIp: fb.sourceIp, arrivalDate: fb.arrivalDate, reportedDomain: fb.reportedDomain });
    const recorded = await recordComplaint(this.deps.store, { subject: subjectOf(m), recipients, details });
    if (recorded.length === 0) return this.duplicate('arf', m.id, recipients);
    return { kind: 'complaint', messageId: m.id, recipients: recorded };
  }

  /** RFC 3464: each failed recipient block of the matched message becomes a bounced event. */
  private async bounce(report: Report, env: Envelope): Promise<Outcome> {
    const keys = reportKeys(report, null);
    const failed = dsnBounces(report);
    const found = this.matcher.match(keys, env.rcptTo);
    // A DSN without failed recipients (delayed, delivered, relayed) is informational (RFC 3464 2.3.3).
    if (!found.message) return failed.length > 0 ? this.unmatched('dsn', keys, env, found.reason) : { kind: 'ignored', recipients: [] };
    const m = found.message;
    const bounced: string[] = [];
    const repeated: string[] = [];
    for (const b of failed) {
      if (!m.recipients.includes(b.recipient)) continue; // only what this message was sent to
      const details = definedOnly({
        bounceType: b.hard ? 'hard' : 'soft',
        category: b.category,
        enhancedCode: b.status,
        smtpCode: b.smtpCode,
        response: b.diagnosticCode,
        reportingMta: b.reportingMta,
        async: true,
      });
      const recorded = await recordAsyncBounce(this.deps.store, { subject: subjectOf(m), recipients: [b.recipient], details, hard: b.hard });
      (recorded.length > 0 ? bounced : repeated).push(b.recipient);
    }
    if (bounced.length === 0 && repeated.length > 0) return this.duplicate('dsn', m.id, repeated);
    if (bounced.length === 0 && failed.length > 0) return this.unmatched('dsn', keys, env, 'no recipient of the message named', m.id);
    return { kind: bounced.length > 0 ? 'bounce' : 'ignored', messageId: m.id, recipients: bounced };
  }

  /** Recipients that have this report's event already: nothing is recorded again. */
  private duplicate(kind: ReportKind, messageId: string, recipients: string[]): Outcome {
    this.deps.logger?.debug({ event: 'inbound_report_repeated', kind, messageId, recipients }, 'repeated report: recipient has this event already');
    return { kind: 'duplicate', messageId, recipients: [] };
  }

  /** Never dropped silently: an operator sees the report's keys in the log and the count in /metrics. */
  private unmatched(kind: ReportKind, keys: ReportKeys, env: Envelope, reason: string, messageId?: string): Outcome {
    this.deps.metrics?.recordUnmatchedReport(kind);
    const fields = definedOnly({ event: 'inbound_report_unmatched', kind, reason, messageId, mailFrom: env.mailFrom, rcptTo: env.rcptTo, ...keys });
    this.deps.logger?.warn(fields, 'inbound report matched no message');
    return { kind: 'unmatched', messageId, recipients: [] };
  }

  /**
   * The mailto unsubscribe: the message's single recipient, or, for a message sent to several,
   * the one among them that sent this mail (envelope sender). Only at the message's own bounce
   * host (ReportMatcher.atHost).
   */
  private async unsubscribe(messageId: string, env: Envelope): Promise<Outcome> {
    const m = this.matcher.atHost(getMessage(this.deps.store, messageId.toLowerCase()), new Set(env.rcptTo.map(hostOf)));
    if (!m || m.mailType !== 'broadcast') return { kind: 'ignored', recipients: [] };
    const sender = env.mailFrom.toLowerCase();
    const recipients = m.recipients.length === 1 ? m.recipients : m.recipients.filter((r) => r === sender);
    const added = await recordUnsubscribe(this.deps.store, { subject: subjectOf(m), recipients, details: { via: 'mailto' } });
    return { kind: 'unsubscribe', messageId: m.id, recipients: added };
  }

  private unsubscribeMessageId(local: string): string | null {
    return local.toLowerCase().startsWith('unsub-') ? verifyUnsubscribeLocalPart(trackingSecret(this.deps.store), local) : null;
  }
}


/** The keys a report offers (report-match.ts); the feedback report's fields when it is one. */
function reportKeys(report: Report, fb: FeedbackReport | null): ReportKeys {
  const original = originalHeaders(report);
  return definedOnly({
    originalMailFrom: fb?.originalMailFrom,
    returnPath: addressOf(original && fieldValue(original, 'Return-Path')),
    messageIdHeader: (original && fieldValue(original, 'Message-ID'))?.trim(),
    recipient: fb?.originalRcptTo ?? addressOf(original && fieldValue(original, 'To')),
  });
}
