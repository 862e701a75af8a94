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
 *    with a provider's feedback loop, say): reports are matched to the message by the original's
 *    Message-ID `<messageId@domain>` or the VERP Original-Mail-From.
 * Anything we cannot match is accepted and dropped: we are the final destination for these
 * hosts, and a bounce of a bounce would only add noise (RFC 3464 4: no DSN about a DSN).
 */
import { domainOf } from '../domain/address.js';
import { definedOnly } from '../domain/defined.js';
import { fieldValue } from '../domain/raw-headers.js';
import { returnPathHost } from '../domain/return-path.js';
import { verifyUnsubscribeLocalPart } from '../domain/tracking-token.js';
import type { MessageRecord } from '../domain/types.js';
import { listAccounts } from '../store/accounts.js';
import { findDomainByName } from '../store/domains.js';
import { recordAsyncBounce, recordComplaint, recordUnsubscribe, subjectOf } from '../store/engagement.js';
import type { Store } from '../store/env.js';
import { getMessage } from '../store/messages.js';
import { trackingSecret } from '../store/secrets.js';
import { feedbackReport } from './arf.js';
import { dsnBounces } from './dsn.js';
import { findReport, originalHeaders, addressOf } from './report.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const VERP = new RegExp(`^bounces\\+(${UUID})$`, 'i');

export interface Envelope {
  mailFrom: string;
  rcptTo: string[];
}

export interface Outcome {
  kind: 'bounce' | 'complaint' | 'unsubscribe' | 'ignored';
  messageId?: string;
  recipients: string[];
}

export class InboundProcessor {
  constructor(private readonly deps: { store: Store; returnPathLabel: string }) {}

  /** RCPT TO check: only our return-path hosts; everything else is relaying and refused. */
  accepts(address: string): boolean {
    const at = address.lastIndexOf('@');
    if (at <= 0) return false;
    const local = address.slice(0, at);
    const host = address.slice(at + 1).toLowerCase().replace(/\.$/, '');
    const verp = VERP.exec(local)?.[1] ?? this.unsubscribeMessageId(local);
    if (verp) {
      const m = getMessage(this.deps.store, verp.toLowerCase());
      if (m && host === this.bounceHostOf(m)) return true;
    }
    const prefix = `${this.deps.returnPathLabel}.`;
    if (!host.startsWith(prefix)) return false;
    const domain = host.slice(prefix.length);
    return listAccounts(this.deps.store).some((a) => findDomainByName(this.deps.store, a.id, domain) !== undefined);
  }

  async process(env: Envelope, raw: Buffer): Promise<Outcome> {
    for (const rcpt of env.rcptTo) {
      const id = this.unsubscribeMessageId(rcpt.slice(0, rcpt.lastIndexOf('@')));
      if (id) return this.unsubscribe(id, env);
    }
    const report = findReport(raw);
    if (!report) return { kind: 'ignored', recipients: [] };
    const verp = env.rcptTo.map((r) => VERP.exec(r.slice(0, r.lastIndexOf('@')))?.[1]).find(Boolean);
    const original = originalHeaders(report);
    const byMessageId = /<([0-9a-f-]{36})@/i.exec((original && fieldValue(original, 'Message-ID')) ?? '')?.[1];

    if (report.reportType === 'feedback-report') {
      const fb = feedbackReport(report);
      // RFC 5965 7.3: "not-spam" reports the opposite of a complaint.
      if (!fb || fb.feedbackType === 'not-spam') return { kind: 'ignored', recipients: [] };
      const fromVerp = VERP.exec((fb.originalMailFrom ?? '').split('@')[0])?.[1];
      const m = this.message(fromVerp ?? verp ?? byMessageId, env);
      if (!m) return { kind: 'ignored', recipients: [] };
      const named = fb.originalRcptTo ?? addressOf(original && fieldValue(original, 'To'));
      const recipients = named && m.recipients.includes(named) ? [named] : m.recipients.length === 1 ? m.recipients : [];
      if (recipients.length === 0) return { kind: 'ignored', messageId: m.id, recipients };
      const details = definedOnly({ feedbackType: fb.feedbackType, userAgent: fb.userAgent, sourceIp: fb.sourceIp, arrivalDate: fb.arrivalDate, reportedDomain: fb.reportedDomain });
      await recordComplaint(this.deps.store, { subject: subjectOf(m), recipients, details });
      return { kind: 'complaint', messageId: m.id, recipients };
    }

    if (report.reportType === 'delivery-status') {
      const m = this.message(verp ?? byMessageId, env);
      if (!m) return { kind: 'ignored', recipients: [] };
      const bounced: string[] = [];
      for (const b of dsnBounces(report)) {
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
        await recordAsyncBounce(this.deps.store, { subject: subjectOf(m), recipients: [b.recipient], details, hard: b.hard });
        bounced.push(b.recipient);
      }
      return { kind: bounced.length > 0 ? 'bounce' : 'ignored', messageId: m.id, recipients: bounced };
    }
    return { kind: 'ignored', recipients: [] };
  }

  /**
   * The mailto unsubscribe: the message's single recipient, or, for a message sent to several,
   * the one among them that sent this mail (envelope sender).
   */
  private async unsubscribe(messageId: string, env: Envelope): Promise<Outcome> {
    const m = this.message(messageId, env);
    if (!m || m.mailType !== 'broadcast') return { kind: 'ignored', recipients: [] };
    const sender = env.mailFrom.toLowerCase();
    const recipients = m.recipients.length === 1 ? m.recipients : m.recipients.filter((r) => r === sender);
    const added = await recordUnsubscribe(this.deps.store, { subject: subjectOf(m), recipients, details: { via: 'mailto' } });
    return { kind: 'unsubscribe', messageId: m.id, recipients: added };
  }

  private unsubscribeMessageId(local: string): string | null {
    return local.toLowerCase().startsWith('unsub-') ? verifyUnsubscribeLocalPart(trackingSecret(this.deps.store), local) : null;
  }

  /** The message, if the mail came to its own return-path host (reports about another
   *  domain's mail, even of the same daemon, are not taken from this host). */
  private message(id: string | undefined | null, env: Envelope): MessageRecord | undefined {
    const m = id ? getMessage(this.deps.store, id.toLowerCase()) : undefined;
    if (!m) return undefined;
    const host = this.bounceHostOf(m);
    return env.rcptTo.some((r) => r.slice(r.lastIndexOf('@') + 1).toLowerCase().replace(/\.$/, '') === host) ? m : undefined;
  }

  private bounceHostOf(m: MessageRecord): string {
    return returnPathHost(domainOf(m.from.email), this.deps.returnPathLabel);
  }
}

