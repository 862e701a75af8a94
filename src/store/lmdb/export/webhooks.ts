/**
 * Webhooks (with their signing keys and delivery status) and their outbox, and inbound routes
 * (with their signing keys: the other endpoints postrider signs for), as transfer records.
 * Only the oldest entry of a (webhook, message) may be sent (LMDB keeps only that one in
 * webhookDue): entries are read in key order, so the first of each pair is its head.
 */
import { EMPTY_STATUS, type OutboxEntry, type Webhook, type WebhookStatus } from '../../../domain/webhook.js';
import type { InboundRoute } from '../../../domain/inbound-route.js';
import type { TransferRecords } from '../../port/transfer.js';
import { entriesOf, type ExportContext } from './context.js';

/** A webhook without its key (never written so by LMDB) is left out: the check reports it. */
export function* webhooks(c: ExportContext): Generator<TransferRecords['webhooks']> {
  for (const { key, value } of entriesOf(c.dbs.webhooks)) {
    const signingKey = c.dbs.webhookSecrets.get(key) as string | undefined;
    if (signingKey === undefined) continue;
    const status: WebhookStatus = { ...EMPTY_STATUS, ...(c.dbs.webhookStatus?.get(key) as WebhookStatus | undefined) };
    yield { webhook: value as Webhook, signingKey, status };
  }
}

/** An inbound route without its key (never written so by LMDB) is left out: the check reports it. */
export function* inboundRoutes(c: ExportContext): Generator<TransferRecords['inboundRoutes']> {
  for (const { key, value } of entriesOf(c.dbs.inboundRoutes)) {
    const signingKey = c.dbs.inboundRouteSecrets?.get(key) as string | undefined;
    if (signingKey !== undefined) yield { route: value as InboundRoute, signingKey };
  }
}

/** The account is the webhook's (the events it gets are its account's); an entry of a webhook gone keeps the channel's. */
export function* webhookOutbox(c: ExportContext): Generator<TransferRecords['webhookOutbox']> {
  let pair = '';
  let account = { webhookId: '', accountId: '' };
  for (const { value } of entriesOf(c.dbs.webhookOutbox)) {
    const entry = value as OutboxEntry;
    if (account.webhookId !== entry.webhookId) {
      account = { webhookId: entry.webhookId, accountId: (c.dbs.webhooks.get(entry.webhookId) as Webhook | undefined)?.accountId ?? '' };
    }
    const head = pair !== `${entry.webhookId}\u0000${entry.messageId}`;
    pair = `${entry.webhookId}\u0000${entry.messageId}`;
    yield { entry, accountId: account.accountId, channelId: entry.payload.channelId, head };
  }
}
