/**
 * The engagement verbs behind the public links in sent mail (http/routes/tracking.ts): opens,
 * clicks, unsubscribes (RFC 8058) and resubscribes. A link carries a signed token
 * (domain/tracking-token.ts); an altered or forged one names nothing. When retention has
 * removed the message, opens and clicks are not recorded, while unsubscribe links keep working
 * from the channel named in their token.
 */
import { AppError } from '../domain/errors.js';
import { verifyToken, type TokenClaims, type TokenKind } from '../domain/tracking-token.js';
import { isChannelDeleted } from '../store/lmdb/channel-records.js';
import { getChannel } from '../store/lmdb/channels.js';
import { recordEngagement, recordResubscribe, recordUnsubscribe, subjectOf, type EventSubject } from '../store/lmdb/engagement.js';
import type { LmdbStore } from '../store/lmdb/engine.js';
import { getMessage } from '../store/lmdb/messages.js';
import { trackingSecret } from '../store/lmdb/secrets.js';
import { getSuppression } from '../store/lmdb/suppressions.js';

/** Where the event came from: {ip, userAgent}, and `link` for clicks. */
export type ClientDetails = Record<string, unknown>;

/** The claims of a token of this kind; 404 not_found when it is altered, forged or of another kind. */
export function claimsOf(store: LmdbStore, token: string, kind: TokenKind): TokenClaims {
  const c = verifyToken(trackingSecret(store), token, kind);
  if (!c) throw new AppError('not_found', 'Unknown or invalid link');
  return c;
}

/**
 * Records `opened` or `clicked` for the token's recipients, if the message is still kept and its
 * channel not deleted (an event added after the channel's purge passed would outlive it; the
 * click still redirects).
 */
export async function recordLinkEvent(store: LmdbStore, type: 'opened' | 'clicked', c: TokenClaims, details: ClientDetails): Promise<void> {
  const message = getMessage(store, c.messageId);
  if (message && !isChannelDeleted(store, message.channelId)) await recordEngagement(store, type, { subject: subjectOf(message), recipients: recipientsOf(c, message.recipients), details });
}

/** Whether every recipient of an unsubscribe link is unsubscribed already (the page says so). */
export function isUnsubscribed(store: LmdbStore, c: TokenClaims): boolean {
  const { subject, recipients } = unsubscribeTarget(store, c);
  return recipients.length > 0 && recipients.every((r) => getSuppression(store, subject.channelId, subject.mailType, r)?.reason === 'unsubscribe');
}

export async function unsubscribe(store: LmdbStore, c: TokenClaims, details: ClientDetails): Promise<void> {
  await recordUnsubscribe(store, { ...unsubscribeTarget(store, c), details });
}

export async function resubscribe(store: LmdbStore, c: TokenClaims, details: ClientDetails): Promise<void> {
  await recordResubscribe(store, { ...unsubscribeTarget(store, c), details });
}

/** The token's recipient, or every recipient of a message rendered for several. */
function recipientsOf(c: TokenClaims, all: string[]): string[] {
  return c.recipient ? [c.recipient] : all;
}

/** Whom an unsubscribe link is about, with or without the message (retention). */
function unsubscribeTarget(store: LmdbStore, c: TokenClaims): { subject: EventSubject; recipients: string[] } {
  const channel = getChannel(store, c.channelId!);
  if (!channel) throw new AppError('not_found', 'This list no longer exists');
  const message = getMessage(store, c.messageId);
  const subject: EventSubject = message
    ? subjectOf(message)
    : { accountId: channel.accountId, channelId: channel.id, messageId: c.messageId, mailType: 'broadcast', mailSource: 'api', subject: '', tags: [], metadata: {} };
  const recipients = recipientsOf(c, message?.recipients ?? []);
  if (recipients.length === 0) throw new AppError('not_found', 'This link has expired');
  return { subject, recipients };
}
