/**
 * What the inbound listener does with mail for the return-path hosts: who may be a recipient
 * (no open relay), and how a received message becomes events and suppressions.
 *
 *  - `bounces+<messageId>-<mac>@<label>.<domain>` (the per-recipient envelope sender of
 *    delivery/return-path.ts, domain/verp.ts): DSNs (RFC 3464) become `bounced` events, hard ones
 *    a suppression (reason bounce); feedback reports (RFC 5965) sent there become `complained`
 *    events and suppressions (reason complaint). One whose mac names no recipient of its message
 *    is forged and refused at RCPT. `bounces+<messageId>@…` (one per message, mail sent before
 *    per-recipient addresses) is still accepted for mail in flight across the upgrade.
 *  - `unsub-<id>-<mac>@<label>.<domain>` (the List-Unsubscribe mailto of broadcast mail, RFC 2369
 *    3.2): unsubscribes as the one-click URL does.
 *  - any other local part at a return-path host of a registered domain (an address registered
 *    with a provider's feedback loop, say): reports are matched by every key they carry
 *    (report-match.ts: bounce addresses, our Message-ID, the client's Message-ID).
 *
 * Reports come from anyone, and any recipient of a message can write another recipient's address
 * into a DSN's Final-Recipient or an ARF's Original-Rcpt-To (issue 29). So a report acts on one
 * recipient only, the one it is tied to: the recipient of a per-recipient bounce address in it,
 * whatever address the report names (a forwarded mailbox's DSN names the address it was
 * forwarded to, RFC 3464 2.3.2, which is why VERP exists); with only a weaker key (our or the
 * client's Message-ID, an old per-message address), the message's recipient when it had exactly
 * one, else none. At most one `bounced` and one `complained` event per message and recipient
 * come from reports (store/engagement.ts): a repeated report is a no-op, logged at debug.
 *
 * A report we cannot match (or tie to a recipient) is accepted, since we are the final
 * destination for these hosts and a bounce of a bounce would only add noise (RFC 3464 4: no DSN
 * about a DSN), but never silently: it is logged (warn, with its keys) and counted in
 * postrider_inbound_reports_unmatched_total.
 */
import type { Logger } from 'pino';
import { definedOnly } from '../domain/defined.js';
import { fieldValue } from '../domain/raw-headers.js';
import { verifyUnsubscribeLocalPart } from '../domain/tracking-token.js';
import { parseVerp } from '../domain/verp.js';
import type { Metrics } from '../log/metrics.js';
import type { StorePort } from '../store/port/index.js';
import { feedbackReport, type FeedbackReport } from './arf.js';
import { dsnBounces, type DsnBounce } from './dsn.js';
import { hostOf, ReportMatcher, type Match, type ReportKeys } from './report-match.js';
import { findReport, originalHeaders, addressOf, type Report } from './report.js';
import { FeedbackService } from './service.js';

export interface Envelope {
  mailFrom: string;
  rcptTo: string[];
}

export interface Outcome {
  /**
   * unmatched: a report about no message we know (or tied to no recipient of it); logged and
   * counted. duplicate: a report about a recipient that already has that report's event.
   */
  kind: 'bounce' | 'complaint' | 'unsubscribe' | 'ignored' | 'unmatched' | 'duplicate';
  messageId?: string;
  recipients: string[];
}

export interface InboundDeps {
  /** Read for matching; writes go through FeedbackService (service.ts). */
  store: StorePort;
  returnPathLabel: string;
  /** Where unmatched reports are counted (postrider_inbound_reports_unmatched_total). */
  metrics?: Pick<Metrics, 'recordUnmatchedReport'>;
  /** Where unmatched reports are logged (warn, with the report's keys); repeated ones at debug. */
  logger?: Pick<Logger, 'warn' | 'debug'>;
}

type ReportKind = 'arf' | 'dsn';

export class InboundProcessor {
  private readonly matcher: ReportMatcher;
  private readonly feedback: FeedbackService;

  constructor(private readonly deps: InboundDeps) {
    this.matcher = new ReportMatcher(deps);
    this.feedback = new FeedbackService(deps.store);
  }

  /**
   * RCPT TO check: only our return-path hosts; everything else is relaying and refused. A
   * per-recipient bounce address of a message we still have must carry a mac of one of its
   * recipients: a forged one is refused (one of a message we no longer have is accepted as any
   * address of the host, and ends unmatched).
   */
  async accepts(address: string): Promise<boolean> {
    const at = address.lastIndexOf('@');
    if (at <= 0) return false;
    const local = address.slice(0, at);
    const host = hostOf(address);
    const hosts = new Set([host]);
    const verp = parseVerp(local);
    const id = verp?.messageId ?? (await this.unsubscribeMessageId(local));
    const message = id ? await this.matcher.atHost(await this.deps.store.messages.get(id), hosts) : undefined;
    if (message && verp?.token) return (await this.matcher.byRecipientVerp(address, hosts)) !== undefined;
    if (message) return true;
    return this.matcher.ownsBounceHost(host);
  }

  async process(env: Envelope, raw: Buffer): Promise<Outcome> {
    for (const rcpt of env.rcptTo) {
      const id = await this.unsubscribeMessageId(rcpt.slice(0, rcpt.lastIndexOf('@')));
      if (id) return this.unsubscribe(id, env);
    }
    const report = findReport(raw);
    if (!report) return { kind: 'ignored', recipients: [] };
    if (report.reportType === 'feedback-report') return this.complaint(report, env);
    if (report.reportType === 'delivery-status') return this.bounce(report, env);
    return { kind: 'ignored', recipients: [] };
  }

  /** RFC 5965: a complaint about the one recipient the report is tied to. */
  private async complaint(report: Report, env: Envelope): Promise<Outcome> {
    const fb = feedbackReport(report);
    const keys = reportKeys(report, fb);
    if (!fb) return this.unmatched('arf', keys, env, 'no feedback-report part');
    // RFC 5965 7.3: "not-spam" reports the opposite of a complaint.
    if (fb.feedbackType === 'not-spam') return { kind: 'ignored', recipients: [] };
    const found = await this.matcher.match(keys, env.rcptTo);
    if (!found.message) return this.unmatched('arf', keys, env, found.reason);
    const m = found.message;
    const recipient = tiedRecipient(found);
    if (!recipient) return this.unmatched('arf', keys, env, 'not tied to a recipient', m.id);
    if (found.recipient && keys.recipient && !sameAddress(keys.recipient, recipient)) this.namesAnother('arf', m.id, keys.recipient);
    const details = definedOnly({ feedbackType: fb.feedbackType, userAgent: fb.userAgent, sourceIp: fb.sourceIp, arrivalDate: fb.arrivalDate, reportedDomain: fb.reportedDomain });
    const recorded = await this.feedback.complaint({ message: m, recipient, details });
    if (recorded.length === 0) return this.duplicate('arf', m.id, recipient);
    return { kind: 'complaint', messageId: m.id, recipients: recorded };
  }

  /**
   * RFC 3464: a failed recipient block becomes a bounced event of the one recipient the DSN is
   * tied to. Tied by its bounce address: the block naming that recipient, else the first failed
   * block (a forwarded copy's DSN names the address after forwarding, 2.3.2). Tied by a weaker key
   * (single-recipient messages only): a block must name that recipient, as before.
   */
  private async bounce(report: Report, env: Envelope): Promise<Outcome> {
    const keys = reportKeys(report, null);
    const failed = dsnBounces(report);
    // A DSN without failed recipients (delayed, delivered, relayed) is informational (RFC 3464 2.3.3).
    if (failed.length === 0) return { kind: 'ignored', recipients: [] };
    const found = await this.matcher.match(keys, env.rcptTo);
    if (!found.message) return this.unmatched('dsn', keys, env, found.reason);
    const m = found.message;
    const recipient = tiedRecipient(found);
    if (!recipient) return this.unmatched('dsn', keys, env, 'not tied to a recipient', m.id);
    const named = failed.find((b) => sameAddress(b.recipient, recipient));
    const b = named ?? (found.recipient ? failed[0] : undefined);
    if (!b) return this.unmatched('dsn', keys, env, 'no recipient of the message named', m.id);
    if (!named) this.namesAnother('dsn', m.id, b.recipient);
    const recorded = await this.feedback.bounce({ message: m, recipient, details: bounceDetails(b), hard: b.hard });
    if (recorded.length === 0) return this.duplicate('dsn', m.id, recipient);
    return { kind: 'bounce', messageId: m.id, recipients: recorded };
  }

  /** A report naming another address than the recipient its bounce address ties it to: acted on for the tied one. */
  private namesAnother(kind: ReportKind, messageId: string, named: string): void {
    this.deps.logger?.debug({ event: 'inbound_report_names_other', kind, messageId, named }, 'report names another address than its bounce address: recorded for the recipient of the bounce address');
  }

  /** A recipient that has this report's event already: nothing is recorded again. */
  private duplicate(kind: ReportKind, messageId: string, recipient: string): Outcome {
    this.deps.logger?.debug({ event: 'inbound_report_repeated', kind, messageId, recipient }, 'repeated report: recipient has this event already');
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
    const m = await this.matcher.atHost(await this.deps.store.messages.get(messageId.toLowerCase()), new Set(env.rcptTo.map(hostOf)));
    if (!m || m.mailType !== 'broadcast') return { kind: 'ignored', recipients: [] };
    const sender = env.mailFrom.toLowerCase();
    const recipients = m.recipients.length === 1 ? m.recipients : m.recipients.filter((r) => r === sender);
    const added = await this.feedback.unsubscribe(m, recipients);
    return { kind: 'unsubscribe', messageId: m.id, recipients: added };
  }

  private async unsubscribeMessageId(local: string): Promise<string | null> {
    return local.toLowerCase().startsWith('unsub-') ? verifyUnsubscribeLocalPart(await this.deps.store.meta.trackingSecret(), local) : null;
  }
}


/**
 * The recipient a match ties the report to: the per-recipient bounce address's, else the
 * message's only recipient (a weaker key names the message, not which of several recipients).
 */
function tiedRecipient(found: Extract<Match, { message: object }>): string | undefined {
  if (found.recipient) return found.recipient;
  return found.message.recipients.length === 1 ? found.message.recipients[0] : undefined;
}

/** Domains are case-insensitive (RFC 5321 2.4); local parts are taken so too, as every mail system does. */
function sameAddress(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

function bounceDetails(b: DsnBounce): Record<string, unknown> {
  return definedOnly({
    bounceType: b.hard ? 'hard' : 'soft',
    category: b.category,
    enhancedCode: b.status,
    smtpCode: b.smtpCode,
    response: b.diagnosticCode,
    reportingMta: b.reportingMta,
    async: true,
  });
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
