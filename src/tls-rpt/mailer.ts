/**
 * Delivers a report to a `mailto:` rua (RFC 8460 5.3) through the one submission path, as a
 * client of the channel named by tlsRpt.reportChannelId submitting a finished message over SMTP
 * would: the raw message goes to Submission.submitRaw, which checks the account (suspended,
 * pending quota), the From against the channel's domains (linked, verified on a live channel),
 * the deny list and the channel's suppressions, commits it durably and has it DKIM-signed with
 * the From domain's key after the commit; delivery then retries it like any message. Nothing
 * here writes the queue.
 *
 * The operator's configuration is the authority here, as an API key is for a client: the
 * Submitter is the configured channel and its account, with no key of its own.
 *
 * A report counts as sent to the address once submission has accepted it: from then on it is an
 * ordinary message, with its delivery, bounces and retries in the activity of the channel.
 */
import { AppError, type ErrorCode } from '../domain/errors.js';
import { getChannel } from '../store/channels.js';
import type { Store } from '../store/env.js';
import type { Submission } from '../submission/submission.js';
import type { Submitter } from '../submission/submitter.js';
import { mailtoRecipient } from './mailto.js';
import { composeReportMail } from './report-mail.js';

/** The submission verbs the mailer uses: the SMTP listener's MAIL FROM check and DATA. */
export type ReportSubmission = Pick<Submission, 'checkSender' | 'submitRaw'>;

export interface ReportMailerOptions {
  store: Store;
  submission: ReportSubmission;
  /** tlsRpt.reportChannelId */
  channelId: string;
  /** tlsRpt.reportFrom */
  from: string;
  /** RFC 8460's submitter (our host name). */
  hostname: string;
  organizationName: string;
}

export interface MailedReport {
  policyDomain: string;
  day: string;
  reportId: string;
  gzip: Uint8Array;
}

/** retry false: this address will not take the report however often it is tried. */
export type MailOutcome = { ok: true; messageId: string } | { ok: false; error: string; retry: boolean };

/** Refusals that concern the recipient: trying again later cannot change them. */
const RECIPIENT_REFUSALS: readonly ErrorCode[] = ['recipients_suppressed', 'recipient_forbidden'];

export class ReportMailer {
  constructor(private readonly opts: ReportMailerOptions) {}

  /**
   * What keeps the configuration from working now, as sentences naming the setting (for the
   * warning at start); empty when a report would be accepted. The channel and its domains live
   * in the store and change at run time, so this warns instead of stopping the start; each
   * report is checked again by submission.
   */
  problems(): string[] {
    const { channelId, from } = this.opts;
    const who = this.submitter();
    if (!who) return [`tlsRpt.reportChannelId: there is no channel ${channelId}`];
    const problems: string[] = [];
    if (who.channel.deliveryType === 'sandbox') problems.push(`tlsRpt.reportChannelId: channel ${channelId} is a sandbox channel; its mail never leaves this machine`);
    try {
      this.opts.submission.checkSender(who, from);
    } catch (err) {
      problems.push(`tlsRpt.reportFrom: ${from} cannot send on channel ${channelId}: ${describe(err)}`);
    }
    return problems;
  }

  async send(uri: string, report: MailedReport): Promise<MailOutcome> {
    const to = mailtoRecipient(uri);
    if (!to.ok) return { ok: false, error: to.reason, retry: false };
    const who = this.submitter();
    if (!who) return { ok: false, error: `tlsRpt.reportChannelId: there is no channel ${this.opts.channelId}`, retry: true };
    const { from, hostname, organizationName } = this.opts;
    let raw: Buffer;
    try {
      raw = await composeReportMail({ ...report, from, to: to.email, submitter: hostname, organizationName, date: new Date() });
    } catch (err) {
      return { ok: false, error: `the report mail could not be composed: ${describe(err)}`, retry: false };
    }
    try {
      // No SMTP client to trace: the Received field names no one ("from unknown").
      const accepted = await this.opts.submission.submitRaw({ ...who, recipients: [to.email], raw, trace: { by: hostname, helo: null, address: null, secure: false } });
      return { ok: true, messageId: accepted.messageId };
    } catch (err) {
      const retry = !(err instanceof AppError && RECIPIENT_REFUSALS.includes(err.code));
      return { ok: false, error: `submission refused the report: ${describe(err)}`, retry };
    }
  }

  private submitter(): Submitter | null {
    const channel = getChannel(this.opts.store, this.opts.channelId);
    if (!channel) return null;
    return { principal: { keyId: 'tls-rpt', accountId: channel.accountId, channelId: channel.id }, channel };
  }
}

function describe(err: unknown): string {
  if (err instanceof AppError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
