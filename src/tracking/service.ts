/**
 * The engagement verbs behind the public links in sent mail (http/routes/tracking.ts): opens,
 * clicks, unsubscribes (RFC 8058) and resubscribes. A link carries a signed token
 * (domain/tracking-token.ts); an altered or forged one names nothing. When retention has
 * removed the message, opens and clicks are not recorded, while unsubscribe links keep working
 * from the channel named in their token.
 */
import { AppError } from '../domain/errors.js';
import { subjectOf, type EventSubject } from '../domain/event-subject.js';
import { verifyToken, type TokenClaims, type TokenKind } from '../domain/tracking-token.js';
import type { StorePort } from '../store/port/index.js';

/** Where the event came from: {ip, userAgent}, and `link` for clicks. */
export type ClientDetails = Record<string, unknown>;

/** The claims of a token of this kind; 404 not_found when it is altered, forged or of another kind. */
export async function claimsOf(store: StorePort, token: string, kind: TokenKind): Promise<TokenClaims> {
  const c = verifyToken(await store.meta.trackingSecret(), token, kind);
  if (!c) throw new AppError('not_found', 'Unknown or invalid link');
  return c;
}

/**
 * Records `opened` or `clicked` for the token's recipients, if the message is still kept and its
 * channel not deleted (an event added after the channel's purge passed would outlive it; the
 * click still redirects).
 */
export async function recordLinkEvent(store: StorePort, type: 'opened' | 'clicked', c: TokenClaims, details: ClientDetails): Promise<void> {
  const message = await store.messages.get(c.messageId);
  if (!message || (await store.channels.isDeleted(message.channelId))) return;
  await store.engagement.recordLinkEvent(type, { subject: subjectOf(message), recipients: recipientsOf(c, message.recipients), details });
}

/** Whether every recipient of an unsubscribe link is unsubscribed already (the page says so). */
export async function isUnsubscribed(store: StorePort, c: TokenClaims): Promise<boolean> {
  const { subject, recipients } = await unsubscribeTarget(store, c);
  if (recipients.length === 0) return false;
  for (const r of recipients) {
    if ((await store.suppressions.get(subject.channelId, subject.mailType, r))?.reason !== 'unsubscribe') return false;
  }
  return true;
}

export async function unsubscribe(store: StorePort, c: TokenClaims, details: ClientDetails): Promise<void> {
  await store.engagement.unsubscribe({ ...(await unsubscribeTarget(store, c)), details });
}

export async function resubscribe(store: StorePort, c: TokenClaims, details: ClientDetails): Promise<void> {
  await store.engagement.resubscribe({ ...(await unsubscribeTarget(store, c)), details });
}

/** The token's recipient, or every recipient of a message rendered for several. */
function recipientsOf(c: TokenClaims, all: string[]): string[] {
  return c.recipient ? [c.recipient] : all;
}

/** Whom an unsubscribe link is about, with or without the message (retention). */
async function unsubscribeTarget(store: StorePort, c: TokenClaims): Promise<{ subject: EventSubject; recipients: string[] }> {
  const channel = await store.channels.get(c.channelId!);
  if (!channel) throw new AppError('not_found', 'This list no longer exists');
  const message = await store.messages.get(c.messageId);
  const subject: EventSubject = message
    ? subjectOf(message)
    : { accountId: channel.accountId, channelId: channel.id, messageId: c.messageId, mailType: 'broadcast', mailSource: 'api', subject: '', tags: [], metadata: {} };
  const recipients = recipientsOf(c, message?.recipients ?? []);
  if (recipients.length === 0) throw new AppError('not_found', 'This link has expired');
  return { subject, recipients };
}
