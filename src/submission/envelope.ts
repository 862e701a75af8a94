/**
 * The SMTP envelope checks (RFC 5321 3.3: MAIL FROM, then RCPT TO per recipient), made while the
 * client is still in the transaction so that a refusal names the command and the recipient at
 * fault. The same rules as the whole-message checks at DATA (raw.ts); the SMTP adapter parses
 * the addresses and calls these.
 */
import { recipientKey } from '../domain/address.js';
import { AppError } from '../domain/errors.js';
import type { Channel } from '../domain/types.js';
import { isSuppressed } from '../store/suppressions.js';
import { allowedSender } from './header-senders.js';
import { isDenied, sendingAccount } from './policy.js';
import type { SubmissionDeps } from './submission.js';

/** The account may send, and the envelope sender is on a domain the channel may send from. */
export function checkEnvelopeSender(deps: SubmissionDeps, q: { accountId: string; channel: Channel; from: string }): void {
  sendingAccount(deps.store, q.accountId);
  allowedSender(deps, { accountId: q.accountId, channel: q.channel, email: q.from, field: 'MAIL FROM' });
}

/** The recipient is not on the operator's deny list nor suppressed on the channel. */
export function checkEnvelopeRecipient(deps: SubmissionDeps, q: { channel: Channel; to: string }): void {
  if (isDenied(deps.config.policy.denyRecipients, q.to)) throw new AppError('recipient_forbidden', 'Recipient not allowed by policy');
  if (isSuppressed(deps.store, q.channel.id, 'transactional', recipientKey(q.to))) {
    throw new AppError('recipients_suppressed', 'Recipient is on the suppression list of this channel');
  }
}
