/**
 * Fixtures of the messages, broadcasts and idempotency contracts: accepted messages and
 * broadcasts as submission builds them (plain data, no engine), so each contract file writes only
 * what it checks.
 */
import { randomUUID } from 'node:crypto';
import type { TemplateOrigin } from '../../src/domain/template.js';
import type { AddressValue } from '../../src/domain/types.js';
import type { BroadcastRecord } from '../../src/store/port/broadcasts.js';
import type { IdempotencyRecord } from '../../src/store/port/idempotency.js';
import type { AcceptedMessage } from '../../src/store/port/messages.js';

export const ACCOUNT = 'acc-contract';
export const CHANNEL = 'ch-contract';

const address = (email: string): AddressValue => ({ email });

/** One message to commit: live unless `sandbox`, sent as it is unless `sign` or `compose` asks for the finishing stage. */
export function accepted(o: {
  to?: string[];
  accountId?: string;
  channelId?: string;
  sandbox?: boolean;
  sign?: string;
  compose?: unknown;
  broadcastId?: string;
  messageIdHeader?: string;
  createdAt?: string;
  /** A scheduled send (issue 34): its jobs are due then. */
  scheduledAt?: string;
  /** The stored template it was sent with (issue 34). */
  template?: TemplateOrigin;
  /** Sandbox: the recipients simulated as bounced. */
  simulatedBounces?: string[];
} = {}): AcceptedMessage {
  const id = randomUUID();
  const to = o.to ?? ['rcpt@example.org'];
  const record: AcceptedMessage['record'] = {
    id,
    accountId: o.accountId ?? ACCOUNT,
    channelId: o.channelId ?? CHANNEL,
    mailType: o.broadcastId ? 'broadcast' : 'transactional',
    mailSource: 'api',
    deliveryType: o.sandbox ? 'sandbox' : 'live',
    ...(o.broadcastId && { broadcastId: o.broadcastId }),
    createdAt: o.createdAt ?? new Date().toISOString(),
    messageIdHeader: o.messageIdHeader ?? `<${id}@sender.test>`,
    subject: 'Contract',
    from: address('from@sender.test'),
    to: to.map(address),
    cc: [],
    bcc: [],
    replyTo: [],
    tracking: { opens: false, links: false },
    tags: [],
    headers: {},
    metadata: {},
    attachments: [],
    size: 100,
    recipients: to,
    suppressed: [],
    ...(o.scheduledAt !== undefined && { scheduledAt: o.scheduledAt }),
    ...(o.template && { template: o.template }),
  };
  const body = o.compose === undefined ? new Uint8Array(Buffer.from(`Subject: Contract\r\n\r\n${id}\r\n`)) : undefined;
  return {
    record,
    ...(body && { body }),
    ...(o.compose !== undefined && { compose: o.compose }),
    ...(o.sign && { signingDomain: o.sign }),
    ...(o.simulatedBounces && { simulatedBounces: o.simulatedBounces }),
  };
}

/** A broadcast as POST /send/broadcast stores it, before any expansion. */
export function broadcast(o: { total: number; channelId?: string; createdAt?: string; subject?: string }): BroadcastRecord<{ subject: string }> {
  return {
    id: randomUUID(),
    accountId: ACCOUNT,
    channelId: o.channelId ?? CHANNEL,
    createdAt: o.createdAt ?? new Date().toISOString(),
    state: 'expanding',
    total: o.total,
    cursor: 0,
    messages: 0,
    skipped: 0,
    failed: 0,
    suppressed: 0,
    common: { subject: o.subject ?? 'Broadcast' },
  };
}

/** One entry of a broadcast: its recipient. */
export function entries(n: number): { to: string }[] {
  return Array.from({ length: n }, (_, i) => ({ to: `r${i}@example.org` }));
}

/** An idempotency record as the gate makes it, live for an hour from `nowMs`. */
export function idempotencyRecord(nowMs: number, body: unknown = { ok: true }, fingerprint = 'f1'): IdempotencyRecord {
  return { fingerprint, status: 200, body, createdAt: new Date(nowMs).toISOString(), expiresAtMs: nowMs + 3_600_000 };
}

/** The rejection reasons of settled promises, and how many were fulfilled. */
export function outcomes(settled: PromiseSettledResult<unknown>[]): { fulfilled: number; reasons: unknown[] } {
  return {
    fulfilled: settled.filter((s) => s.status === 'fulfilled').length,
    reasons: settled.flatMap((s) => (s.status === 'rejected' ? [s.reason] : [])),
  };
}
