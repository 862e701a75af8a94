/**
 * Fixtures for delivery tests: a real store in a temp folder, messages committed the way the
 * send path commits them (MessagesPort.commit, so jobs and events are real), a config for a
 * DeliveryService that delivers to test MX servers on loopback through the test DNS server.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { DeliveryService, type DeliveryServiceOptions } from '../../src/delivery/dispatcher.js';
import { domainOf } from '../../src/domain/address.js';
import type { DeliveryJob, MessageRecord } from '../../src/domain/types.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import type { StorePort } from '../../src/store/port/index.js';
import { openStore } from './store.js';

export const ACCOUNT = 'acc-1';
export const CHANNEL = 'ch-1';

export interface TestStore<S extends StorePort = StorePort> {
  store: S;
  dataDir: string;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A started store in a fresh temp folder, opened with support/store.ts; the LMDB engine's own
 * tests pass `open` (support/lmdb-store.ts, openLmdbStore) to get the engine itself.
 */
export function openTestStore(): Promise<TestStore>;
export function openTestStore<S extends StorePort>(open: (dataDir: string) => Promise<S>): Promise<TestStore<S>>;
export async function openTestStore(open: (dataDir: string) => Promise<StorePort> = openStore): Promise<TestStore> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-delivery-'));
  const t: TestStore = {
    store: await open(dataDir),
    dataDir,
    async reopen() {
      await t.store.stop();
      t.store = await open(dataDir);
    },
    async close() {
      await t.store.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return t;
}

/** A real RFC 5322 message, as the compose worker would have produced it (CRLF lines). */
export function rawMessage(from: string, to: string[], subject = 'Hello'): Buffer {
  return Buffer.from(
    [
      `From: Sender <${from}>`,
      `To: ${to.join(', ')}`,
      `Subject: ${subject}`,
      `Date: Mon, 06 Jan 2025 09:00:00 +0000`,
      `Message-ID: <${randomUUID()}@${domainOf(from)}>`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: 7bit',
      '',
      'Hello from postrider.',
      '.a line that starts with a dot (RFC 5321 4.5.2 transparency)',
      '',
    ].join('\r\n'),
  );
}

export interface TestMessage {
  to: string[];
  from?: string;
  mailType?: 'transactional' | 'broadcast';
  now?: Date;
  body?: Buffer;
  signingDomain?: string;
  accountId?: string;
  channelId?: string;
  /** A scheduled send: its jobs are due then (ISO 8601). */
  scheduledAt?: string;
}

/** Commits one live message the way the send path does; returns its id. */
export async function queueMessage(store: StorePort, o: TestMessage): Promise<string> {
  const id = randomUUID();
  const from = o.from ?? 'news@sender.test';
  const body = o.body ?? rawMessage(from, o.to);
  const now = o.now ?? new Date();
  const record = messageRecord(id, { ...o, from, size: body.length, now });
  await store.messages.commit({ messages: [{ record, body, signingDomain: o.signingDomain }], now });
  return id;
}

/** The record a send of `o` commits (accepted at o.now), as the submission path builds it. */
export function messageRecord(id: string, o: TestMessage & { from: string; size: number; now: Date }): Omit<MessageRecord, 'openJobs' | 'status'> {
  return {
    id,
    accountId: o.accountId ?? ACCOUNT,
    channelId: o.channelId ?? CHANNEL,
    mailType: o.mailType ?? 'transactional',
    mailSource: 'api',
    deliveryType: 'live',
    createdAt: o.now.toISOString(),
    messageIdHeader: `<${id}@sender.test>`,
    subject: 'Hello',
    from: { email: o.from },
    to: o.to.map((email) => ({ email })),
    cc: [],
    bcc: [],
    replyTo: [],
    tracking: { links: false, opens: false },
    tags: [],
    headers: {},
    metadata: {},
    attachments: [],
    size: o.size,
    recipients: o.to.map((t) => t.toLowerCase()),
    suppressed: [],
    ...(o.scheduledAt !== undefined && { scheduledAt: o.scheduledAt }),
  };
}

/** Whether every one of the messages is sent (its last job done). */
export async function allSent(store: StorePort, ids: readonly string[]): Promise<boolean> {
  const records = await Promise.all(ids.map((id) => store.messages.get(id)));
  return records.every((m) => m?.status === 'sent');
}

/** The message's delivery jobs, in any state. */
export function jobsOf(store: Pick<StorePort, 'queue'>, messageId: string): Promise<DeliveryJob[]> {
  return store.queue.jobsOfMessage(messageId);
}

/** The ids of the queue's due jobs in due order (not those whose message awaits its composition or signature). */
export async function dueJobIds(store: Pick<StorePort, 'queue'>): Promise<string[]> {
  return (await store.queue.list({ state: 'queued', limit: Number.MAX_SAFE_INTEGER })).map((j) => j.id);
}

export function deliveryConfig(overrides: Record<string, unknown> = {}): Config {
  return loadConfig({
    env: {},
    overrides: {
      dataDir: os.tmpdir(),
      hostname: 'postrider.test',
      'log.level': 'silent',
      'delivery.allowPrivate': true,
      'shutdown.graceMs': 2000,
      ...overrides,
    },
  });
}

export function silentLogger(): Logger {
  return createLogger({ level: 'silent' });
}

/** SMTP timeouts short enough that an attempt at a dead or silent MX ends within a test. */
export const TEST_SMTP_TIMEOUTS = { connectMs: 2000, greetingMs: 5000, commandMs: 5000, dataMs: 5000 };

/**
 * A DeliveryService (not started) on `store` that delivers through `resolver` with
 * deliveryConfig(`overrides`), silent logs and TEST_SMTP_TIMEOUTS; `extra` adds options (a clock,
 * idleCheckMs) or replaces these.
 */
export function testDeliveryService(
  store: StorePort,
  resolver: DeliveryServiceOptions['resolver'],
  overrides: Record<string, unknown> = {},
  extra: Partial<DeliveryServiceOptions> = {},
): DeliveryService {
  return new DeliveryService({ store, config: deliveryConfig(overrides), resolver, logger: silentLogger(), timeouts: TEST_SMTP_TIMEOUTS, ...extra });
}
