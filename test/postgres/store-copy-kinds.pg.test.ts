/**
 * The copy's two halves at the engine level (store/lmdb/export/ → store/postgres/import/), for
 * the kinds a daemon's store rarely holds when a test stops it: dashboard sessions, a deleted
 * channel with its purge pending, messages waiting for the finishing stage (to sign, to
 * compose), a client Message-ID, a pending account's send quota, leased jobs, a message parked
 * by an older version's retention (and the log's floor moved), the report marks of a complaint and of an
 * asynchronous bounce, TLS-RPT counts with failure details and a report, an MTA-STS policy and
 * DNS failures, an inbound route, received messages (one posted, one claimed, with 8-bit raw bytes). An LMDB store is seeded through the port, copied, and the PostgreSQL store
 * (opened afresh, as a daemon after the copy) answers the port's reads as LMDB did; where the
 * copy changes state on purpose (a leased job is due again) or carries a rule (a report is not
 * recorded twice, the quota is used up), the next verb shows it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyBatches } from '../../src/cli/store-copy-report.js';
import type { EventSubject } from '../../src/domain/event-subject.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import { lmdbExport } from '../../src/store/lmdb/export/index.js';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import { postgresImport } from '../../src/store/postgres/import/index.js';
import type { StorePort } from '../../src/store/port/index.js';
import { parkAsBefore } from '../support/lmdb-retention.js';
import { accepted, broadcast, entries } from '../store-contract/submissions.js';

const PG_URL = process.env.POSTRIDER_TEST_PG_URL ?? '';
const NOW = Date.parse('2026-03-02T10:00:00.000Z');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const TLS_DAY = '2026-03-01';

interface Seeded {
  accountId: string;
  channelId: string;
  goneChannelId: string;
  templateId: string;
  keyToken: string;
  sessionToken: string;
  /** Client Message-ID and quota; leased. */
  m1: string;
  /** Waits to be signed: its job held. */
  m2: string;
  /** Waits to be composed. */
  m3: string;
  /** Leased; bounced by a report. */
  m4: string;
  /** Old, still queued: kept whole by retention, parked by an older version's. */
  m5: string;
  /** Scheduled an hour after the copy (issue 34). */
  m6: string;
  /** Canceled before any attempt: its canceled event, its jobs done. */
  m7: string;
  /** A scheduled broadcast (issue 34): one entry expanded (its message scheduled), one not. */
  broadcastId: string;
  leaseGeneration: number;
  /** An inbound route (with its key) on the account's domain. */
  routeId: string;
  /** Received for the route: posted; received and claimed (lease 1). */
  inbound: { posted: string; claimed: string };
}

const INBOUND_RAW = Buffer.from('From: ann@example.org\r\nSubject: \xe9t\xe9\r\n\r\n\x00\xff body\r\n', 'latin1');

/** Two received messages for the route: one posted, one claimed and not finished when the daemon stopped. */
async function seedInbound(store: StorePort, route: { id: string; accountId: string; channelId: string }): Promise<Seeded['inbound']> {
  const copy = (rcpt: string) => ({ routeId: route.id, accountId: route.accountId, channelId: route.channelId, envelope: { mailFrom: 'ann@example.org', rcptTo: [rcpt] }, clientAddress: '192.0.2.7', helo: 'mx.example.org', mailboxHash: null, from: 'ann@example.org', subject: 'été' });
  const [posted] = await store.inboundMessages.commit({ receivedAt: new Date(NOW - 120_000), raw: INBOUND_RAW, messages: [copy('a@inbound.test')] });
  const [claimed] = await store.inboundMessages.commit({ receivedAt: new Date(NOW - 60_000), raw: INBOUND_RAW, messages: [copy('b@inbound.test')] });
  const { claims } = await store.inboundMessages.claimDue({ owner: 'node-1', nowMs: NOW - 60_000, max: 10, leaseMs: 300_000 });
  await store.inboundMessages.markProcessed(posted.id, claims[0].lease, { spf: { result: 'pass', domain: 'example.org' }, dkim: [], dmarc: { result: 'none', domain: null, policy: null }, arc: { result: 'none' } });
  await store.inboundMessages.recordAttempt({ id: posted.id, lease: claims[0].lease, attempt: { at: new Date(NOW - 60_000).toISOString(), statusCode: 204, error: null }, end: { kind: 'posted' } });
  return { posted: posted.id, claimed: claimed.id };
}

async function seed(store: LmdbStore): Promise<Seeded> {
  const account = await store.accounts.create({ name: 'pending one', state: 'pending' });
  const accountId = account.id;
  const { key, token: keyToken } = await store.apiKeys.create({ accountId, channelId: null, name: 'k' });
  const { token: sessionToken } = await store.sessions.create({ keyId: key.id, accountId, nowMs: NOW, lifetimeMs: DAY });
  const channel = await store.channels.create({ accountId, name: 'Main', deliveryType: 'live', tracking: { opens: false, links: false }, maxPerAccount: 10 });
  const gone = await store.channels.create({ accountId, name: 'Gone', deliveryType: 'live', tracking: { opens: false, links: false }, maxPerAccount: 10 });
  const own = { accountId, channelId: channel.id };
  // Finished at its commit (sandbox), long ago: retention removes it and moves the log's floor.
  const past = accepted({ ...own, sandbox: true, createdAt: new Date(NOW - 31 * DAY).toISOString() });
  await store.messages.commit({ messages: [past], now: new Date(NOW - 31 * DAY) });
  const old = accepted({ ...own, to: ['old@example.org'], createdAt: new Date(NOW - 30 * DAY).toISOString() });
  await store.messages.commit({ messages: [old], now: new Date(NOW - 30 * DAY) });
  const m1 = accepted({ ...own, to: ['ann@example.org'], messageIdHeader: '<client-1@app.test>', createdAt: new Date(NOW - 60_000).toISOString() });
  await store.messages.commit({ messages: [m1], sendLimit: { accountId, limit: 2 }, now: new Date(NOW - 60_000) });
  const m2 = accepted({ ...own, to: ['bob@example.org'], sign: 'sender.test' });
  const m3 = accepted({ ...own, to: ['cat@example.org'], compose: { template: 'welcome', data: { name: 'Cat' } }, template: { id: '7d0c5a1e-2b3f-4c5d-8e9f-0a1b2c3d4e5f', alias: 'welcome', version: 1 } });
  const m4 = accepted({ ...own, to: ['dan@example.net'], createdAt: new Date(NOW - 60_000).toISOString() });
  await store.messages.commit({ messages: [m2, m3, m4], now: new Date(NOW - 60_000) });
  const leased = (await store.queue.lease({ owner: 'node-a', nowMs: NOW, max: 10, leaseMs: 600_000 })).jobs;
  expect(leased.map((j) => j.messageId).sort()).toEqual([old.record.id, m1.record.id, m4.record.id].sort());
  const m6 = accepted({ ...own, to: ['eve@example.org'], scheduledAt: new Date(NOW + HOUR).toISOString(), createdAt: new Date(NOW - 60_000).toISOString() });
  const m7 = accepted({ ...own, to: ['fay@example.org'], scheduledAt: new Date(NOW + HOUR).toISOString(), createdAt: new Date(NOW - 60_000).toISOString() });
  await store.messages.commit({ messages: [m6, m7], now: new Date(NOW - 60_000) });
  expect(await store.messages.cancelMessage(m7.record.id, new Date(NOW - 30_000))).toMatchObject({ status: 'done' });
  const b = { ...broadcast({ total: 2, channelId: channel.id }), accountId, scheduledAt: new Date(NOW + HOUR).toISOString() };
  await store.broadcasts.accept({ record: b, entries: entries(2) });
  const bm = accepted({ ...own, broadcastId: b.id, to: ['gil@example.org'], scheduledAt: b.scheduledAt, createdAt: new Date(NOW - 60_000).toISOString() });
  await store.messages.commit({ messages: [bm], now: new Date(NOW - 60_000), broadcastProgress: { broadcastId: b.id, from: 0, cursor: 1, skipped: 0, failures: [], suppressed: [] } });
  await store.retention.sweepBatch({ cutoffMs: NOW - DAY, batch: 100 });
  await parkAsBefore(store, old.record.id, NOW - 30 * DAY);
  await store.channels.delete(gone.id);
  const subject = (messageId: string): EventSubject => ({ ...own, messageId, mailType: 'transactional', mailSource: 'api', subject: 'Contract', tags: ['t1'], metadata: {} });
  await store.engagement.recordComplaint({ subject: subject(m1.record.id), recipients: ['Ann@example.org'], details: {}, at: new Date(NOW) });
  await store.engagement.recordAsyncBounce({ subject: subject(m4.record.id), recipients: ['dan@example.net'], details: { async: true }, hard: true, at: new Date(NOW) });
  await store.tlsRpt.addCounts([
    {
      day: TLS_DAY,
      policyDomain: 'example.net',
      policy: { type: 'sts', string: ['version: STSv1', 'mode: enforce'], mxHost: 'mx.example.net' },
      success: 7,
      failures: [
        { failure: { type: 'certificate-expired', receivingMxHostname: 'mx.example.net' }, count: 2 },
        { failure: { type: 'starttls-not-supported', receivingMxHostname: 'mx2.example.net' }, count: 1 },
      ],
    },
  ]);
  await store.tlsRpt.createReport(TLS_DAY, 'example.net', { reportId: 'r-1', gzip: new Uint8Array([31, 139, 8, 0]), pending: ['mailto:tls@example.net'], attempts: 1, nextAtMs: NOW + 3_600_000 });
  await store.mtaSts.save('example.net', { id: 'sts-1', policy: { mode: 'enforce', mx: ['mx.example.net'], maxAge: 86_400 }, fetchedAtMs: NOW, expiresAtMs: NOW + DAY });
  await store.dnsFailures.countFailure({ accountId, domain: 'nx.example', atMs: NOW - 1_000 });
  await store.dnsFailures.countFailure({ accountId, domain: 'nx.example', atMs: NOW });
  const ids = { m1: m1.record.id, m2: m2.record.id, m3: m3.record.id, m4: m4.record.id, m5: old.record.id, m6: m6.record.id, m7: m7.record.id };
  const domain = await store.domains.create({ accountId, name: 'inbound.test', channelIds: [channel.id], key: { selector: 's1', algorithm: 'rsa', privateKeyPem: 'pem', dnsValue: 'v=DKIM1; p=x' }, returnPath: [], maxPerAccount: 10 });
  const route = await store.inboundRoutes.create({ accountId, channelId: channel.id, domainId: domain.id, address: '*@inbound.test', url: 'https://app.example.org/in', enabled: true, additionalHeaders: [{ name: 'X-T', value: '1' }], maxPerAccount: 10 });
  const inbound = await seedInbound(store, route.route);
  const limits = { maxPerAccount: 10, maxVersions: 10 };
  const tpl = await store.templates.create({ accountId, name: 'Welcome', alias: 'welcome', channelIds: [channel.id], content: { subject: 'Hi {{n}}', html: '<p>é</p>' }, limits });
  await store.templates.update(tpl.template.id, { patch: {}, content: { subject: 'v2', text: 't', inlineStyles: true }, limits });
  await store.templates.activate(tpl.template.id, 1);
  return { accountId, channelId: channel.id, goneChannelId: gone.id, keyToken, sessionToken, ...ids, broadcastId: b.id, leaseGeneration: leased[0].leaseGeneration, routeId: route.route.id, inbound, templateId: tpl.template.id };
}

/** What the port reads of the seeded store: the same on both engines after the copy. */
async function reads(store: StorePort, s: Seeded) {
  const ids = [s.m1, s.m2, s.m3, s.m4, s.m5, s.m6, s.m7];
  return {
    accounts: await store.accounts.list(),
    key: await store.apiKeys.findByToken(s.keyToken),
    session: await store.sessions.findByToken(s.sessionToken),
    gone: await store.channels.getRecord(s.goneChannelId),
    purges: await store.channels.pendingPurges(),
    // acceptedSeq is LMDB's key into its queued-message index, not part of the record PostgreSQL keeps.
    messages: (await Promise.all(ids.map((id) => store.messages.get(id)))).map((m) => m && { ...m, acceptedSeq: undefined }),
    bodies: (await Promise.all(ids.map((id) => store.messages.body(id)))).map((b) => b && Buffer.from(b).toString('base64')),
    unfinished: await Promise.all([s.m2, s.m3].map(async (id) => ({ ...(await store.messages.unfinished(id)), body: undefined }))),
    byClientId: await store.messages.byClientMessageId(s.accountId, '<client-1@app.test>'),
    parked: await store.retention.isPending(s.m5),
    events: await Promise.all(ids.map((id) => store.events.ofMessage(id))),
    suppressions: await store.suppressions.list(s.channelId),
    broadcast: await store.broadcasts.view(s.broadcastId),
    broadcastEntries: await store.broadcasts.entries(s.broadcastId, 0, 10),
    tlsCounts: await store.tlsRpt.counts(TLS_DAY, 'example.net'),
    tlsReport: await store.tlsRpt.report(TLS_DAY, 'example.net').then((r) => r && { ...r, gzip: Buffer.from(r.gzip).toString('hex') }),
    mtaSts: await store.mtaSts.get('example.net'),
    dnsFailures: await store.dnsFailures.recent(s.accountId, 'nx.example'),
    route: await store.inboundRoutes.get(s.routeId),
    routeKey: await store.inboundRoutes.signingKey(s.routeId),
    routeMatch: await store.inboundRoutes.match('ann+7@inbound.test'),
    template: await store.templates.version(s.accountId, 'welcome'),
    templateVersions: await store.templates.versions(s.templateId),
    templates: await store.templates.list({ accountId: s.accountId, limit: 10, offset: 0 }),
    inbound: await store.inboundMessages.list({ accountId: s.accountId, limit: 10 }),
    inboundPerDay: await store.inboundMessages.receivedPerDay({ accountId: s.accountId, fromDay: Math.floor(NOW / DAY) - 1, toDay: Math.floor(NOW / DAY) }),
    inboundRaw: await Promise.all([s.inbound.posted, s.inbound.claimed].map(async (id) => (await store.inboundMessages.raw(id))?.toString('hex'))),
  };
}

describe('store copy: every kind, engine to engine', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-copy-kinds-'));
  const lmdb = new LmdbStore({ dataDir });
  let pg: PostgresStore;
  let s: Seeded;

  beforeAll(async () => {
    await lmdb.start();
    s = await seed(lmdb);
    const target = new PostgresStore({ url: PG_URL, schema: 'copy_kinds', poolSize: 2 });
    await target.start();
    try {
      const source = lmdbExport(lmdb, { nowMs: NOW, batchRecords: 2 });
      const io = { out: () => undefined, err: () => undefined, env: {} };
      await copyBatches(source, postgresImport(target), io);
      expect(await postgresImport(target).counts()).toEqual(source.counts());
    } finally {
      await target.stop();
    }
    // Opened afresh, as a daemon after the copy: its view of deleted channels starts from the copied tombstones.
    pg = new PostgresStore({ url: PG_URL, schema: 'copy_kinds', poolSize: 2 });
    await pg.start();
  }, 60_000);

  afterAll(async () => {
    await pg?.stop();
    await lmdb.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers the port reads as LMDB did', async () => {
    const before = await reads(lmdb, s);
    expect(before.templateVersions).toHaveLength(2);
    expect(before.broadcast?.record).toMatchObject({ scheduledAt: new Date(NOW + HOUR).toISOString(), cursor: 1, state: 'expanding' });
    expect(before.broadcastEntries.map((e) => e.index)).toEqual([1]);
    expect(before.gone?.deletedAt).toBeDefined();
    expect(before.parked).toBe(true);
    expect([before.route?.address, before.routeKey, before.routeMatch?.mailboxHash]).toEqual(['*@inbound.test', expect.stringMatching(/^whsec_/), '7']);
    expect(before.unfinished.map((u) => u.compose)).toEqual([undefined, { template: 'welcome', data: { name: 'Cat' } }]);
    // A message sent with a stored template names it (issue 34): carried in its record.
    expect(before.messages[2]?.template).toEqual({ id: '7d0c5a1e-2b3f-4c5d-8e9f-0a1b2c3d4e5f', alias: 'welcome', version: 1 });
    expect(before.inbound.results.map((m) => [m.id, m.status])).toEqual([[s.inbound.claimed, 'received'], [s.inbound.posted, 'posted']]);
    expect(before.inboundPerDay.map((d) => d.received)).toEqual([0, 2]);
    expect(before.inboundRaw).toEqual([INBOUND_RAW.toString('hex'), INBOUND_RAW.toString('hex')]);
    expect(await reads(pg, s)).toEqual(before);
    expect(pg.queue.channelDeleted(s.goneChannelId)).toBe(true);
    // Retention moved the floor past the old finished message's events: the log's bounds came along.
    const bounds = await lmdb.events.bounds();
    expect(bounds.floor).toBeGreaterThan(1);
    expect(await pg.events.bounds()).toEqual(bounds);
  });

  it('carries a scheduled message due at its time and a canceled one with its jobs done (issue 34)', async () => {
    expect((await pg.queue.jobsOfMessage(s.m6)).map((j) => [j.state, j.dueAt])).toEqual([['queued', new Date(NOW + HOUR).toISOString()]]);
    expect(await pg.queue.nextDueAfter(NOW)).toBe(NOW + HOUR);
    expect(await pg.messages.get(s.m7)).toMatchObject({ status: 'sent', canceledAt: new Date(NOW - 30_000).toISOString() });
    expect((await pg.queue.jobsOfMessage(s.m7)).map((j) => j.state)).toEqual(['done']);
    expect((await pg.events.ofMessage(s.m7)).map((e) => e.eventType)).toEqual(['accepted', 'processed', 'canceled']);
  });

  it('puts leased jobs back in the queue, due at the copy, fenced past their last lease', async () => {
    const [job] = await pg.queue.jobsOfMessage(s.m4);
    expect(job).toMatchObject({ state: 'queued', dueAt: new Date(NOW).toISOString() });
    expect(job.leaseUntil).toBeUndefined();
    const held = await pg.queue.jobsOfMessage(s.m2);
    expect(held.map((j) => j.state)).toEqual(['queued']);
    const leased = (await pg.queue.lease({ owner: 'node-b', nowMs: NOW, max: 10, leaseMs: 600_000 })).jobs;
    // The three that were leased; the held one waits for its signature.
    expect(leased.map((j) => j.messageId).sort()).toEqual([s.m1, s.m4, s.m5].sort());
    expect(leased.every((j) => j.leaseGeneration > s.leaseGeneration)).toBe(true);
  });

  it('keeps the rules the copied state carries: reports marked, the quota used', async () => {
    const subject: EventSubject = { accountId: s.accountId, channelId: s.channelId, messageId: s.m1, mailType: 'transactional', mailSource: 'api', subject: 'Contract', tags: [], metadata: {} };
    expect(await pg.engagement.recordComplaint({ subject, recipients: ['ann@example.org'], details: {} })).toEqual([]);
    expect(await pg.engagement.recordAsyncBounce({ subject: { ...subject, messageId: s.m4 }, recipients: ['DAN@example.net'], details: { async: true }, hard: true })).toEqual([]);
    const over = accepted({ accountId: s.accountId, channelId: s.channelId, to: ['x@example.org', 'y@example.org'] });
    await expect(pg.messages.commit({ messages: [over], sendLimit: { accountId: s.accountId, limit: 2 } })).rejects.toMatchObject({ code: 'send_limit_exceeded' });
  });

  it('carries a claimed received message with its lease: due after it, an attempt under it recorded, under an older one stale', async () => {
    const after = await pg.inboundMessages.claimDue({ owner: 'node-1', nowMs: NOW - 60_000 + 299_999, max: 10, leaseMs: 60_000 });
    expect(after.claims).toEqual([]);
    expect(after.nextDueMs).toBe(NOW - 60_000 + 300_000);
    const attempt = { at: new Date(NOW).toISOString(), statusCode: 200, error: null };
    expect(await pg.inboundMessages.recordAttempt({ id: s.inbound.claimed, lease: 0, attempt, end: { kind: 'posted' } })).toBe('stale');
    expect(await pg.inboundMessages.recordAttempt({ id: s.inbound.claimed, lease: 1, attempt, end: { kind: 'posted' } })).toBe('recorded');
    expect((await pg.inboundMessages.get(s.inbound.claimed))?.status).toBe('posted');
  });
});
