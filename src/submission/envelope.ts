/**
 * The SMTP envelope checks (RFC 5321 3.3: MAIL FROM, then RCPT TO per recipient), made while the
 * client is still in the transaction so that a refusal names the command and the recipient at
 * fault. The same rules as the whole-message checks at DATA (raw.ts); the SMTP adapter parses
 * the addresses and calls these.
 */
import { recipientKey } from '../domain/address.js';
import { AppError } from '../domain/errors.js';
import type { SubmissionDeps } from './deps.js';
import { allowedSender } from './header-senders.js';
import { assertMaySend, isDenied } from './policy.js';
import type { Submitter } from './submitter.js';

/** The account may send, and the envelope sender is on a domain the channel may send from. */
export async function checkEnvelopeSender(deps: SubmissionDeps, who: Submitter, from: string): Promise<void> {
  await assertMaySend(deps.store, who.principal.accountId);
  await allowedSender(deps, { accountId: who.principal.accountId, channel: who.channel, email: from, field: 'MAIL FROM' });
}

/** The recipient is not on the operator's deny list nor suppressed on the channel. */
export async function checkEnvelopeRecipient(deps: SubmissionDeps, who: Submitter, to: string): Promise<void> {
  if (isDenied(deps.config.policy.denyRecipients, to)) throw new AppError('recipient_forbidden', 'Recipient not allowed by policy');
  if (await deps.store.suppressions.is(who.channel.id, 'transactional', recipientKey(to))) {
    throw new AppError('recipients_suppressed', 'Recipient is on the suppression list of this channel');
  }
}
