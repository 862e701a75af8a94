/**
 * `postrider store copy-to-postgres` (issue 32, Operations): a single node's LMDB store, made by
 * a real daemon (sandbox and live sends delivered to a sink MX, one left queued by a 451, a
 * broadcast with a suppressed recipient, suppressions, a webhook with its outbox, an idempotent
 * send), is copied into an empty PostgreSQL schema with the daemon stopped; a daemon started on
 * that schema (same data folder, so the same node id) then answers the same API key with the
 * same messages, the same events under the same cursors, the same statistics and suppressions,
 * and its next event continues the copied log's seqs. The command refuses while a daemon holds
 * the data folder, and refuses a schema that holds data already.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log/logger.js';
import { main } from '../../src/main.js';
import { apiRequest, type ApiOptions, type ApiResponse } from '../support/daemon.js';
import { deliverySettings, startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const PG_URL = process.env.POSTRIDER_TEST_PG_URL ?? '';
const SCHEMA = 'copied';
const SINK = 'sink.example';

type Api = (method: string, urlPath: string, o?: ApiOptions) => Promise<ApiResponse>;

/** Runs `postrider ...args` in this process, on the data folder, with no other setting. */
async function cli(args: string[], dataDir: string): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (l) => out.push(l), err: (l) => err.push(l), env: { POSTRIDER_DATA_DIR: dataDir } });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Every page of a cursor list, with the `after` each page gave: the cursors must survive the copy. */
async function allPages(api: Api, urlPath: string): Promise<{ results: unknown[]; after: unknown }[]> {
  const pages: { results: unknown[]; after: unknown }[] = [];
  let after = 0;
  for (;;) {
    const res = await api('GET', `${urlPath}${urlPath.includes('?') ? '&' : '?'}limit=7&after=${after}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages.push({ results: res.body.results, after: res.body.after });
    if (res.body.results.length < 7) return pages;
    after = res.body.after;
  }
}

/** What a client sees of the account, through the API. */
async function views(api: Api, s: { sandbox: Sender; live: Sender; broadcastId: string; deliveredId: string }) {
  const get = async (p: string) => {
    const res = await api('GET', p);
    expect(res.status, `${p}: ${JSON.stringify(res.body)}`).toBe(200);
    return res.body;
  };
  return {
    channels: await get('/channels'),
    domains: await get('/domains'),
    events: await allPages(api, '/activity/events'),
    messages: await allPages(api, '/activity/messages'),
    queued: await allPages(api, '/activity/messages?status=queued'),
    delivered: await get(`/activity/messages/${s.deliveredId}`),
    totals: await get('/statistics/totals'),
    daily: await get('/statistics/daily'),
    // The rollup of hours and days is rebuilt by the copy (issue 36): zone days off the UTC hour too, and hours.
    dailyKolkata: await get('/statistics/daily?timezone=Asia/Kolkata'),
    hourly: await get('/statistics/hourly'),
    suppressions: await get(`/suppressions?channelId=${s.live.channelId}&mailType=transactional`),
    broadcast: await get(`/broadcasts/${s.broadcastId}`),
    broadcastFailures: await get(`/broadcasts/${s.broadcastId}/failures`),
    broadcastSuppressed: await get(`/broadcasts/${s.broadcastId}/suppressions`),
    webhooks: ((await get('/webhooks')).results as { id: string; url: string; events: string[] }[]).map((w) => ({ id: w.id, url: w.url, events: w.events })),
  };
}

/** A process that holds the data folder's lock as a running daemon does (its record: PID, start time, host). */
function holdLock(dataDir: string): ChildProcess {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  const stat = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8');
  const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  const record = { pid: child.pid, started, host: os.hostname(), since: new Date().toISOString() };
  fs.writeFileSync(path.join(dataDir, 'daemon.lock'), JSON.stringify(record) + '\n', { mode: 0o600 });
  return child;
}

describe('postrider store copy-to-postgres', () => {
  let rig: DeliveryRig;
  let hooks: WebhookReceiver;
  let sandbox: Sender;
  let dataDir: string;
  let ids: { broadcastId: string; deliveredId: string };
  let before: Awaited<ReturnType<typeof views>>;
  let pgDaemon: Daemon | undefined;

  const send = (s: Sender, to: string, o: { tags?: string[]; headers?: Record<string, string> } = {}) =>
    rig.t.api('POST', '/send/transactional', {
      headers: { 'X-Service-Channel-Id': s.channelId, ...o.headers },
      body: { from: { email: `app@${s.domain}` }, to: [{ email: to }], subject: `Hello ${to}`, text: 'Hi', tags: o.tags ?? [] },
    });

  beforeAll(async () => {
    // LMDB whatever engine the run puts other test daemons on: this is the store being copied.
    // The webhook's endpoint answers 503: its entries stay in the outbox, retried, when the daemon stops.
    hooks = await startWebhookReceiver();
    hooks.on('/in', () => ({ status: 503 }));
    rig = await startDeliveryRig({ mx: { address: '127.0.31.9' }, domains: [SINK], daemon: { 'store.postgresUrl': '', 'webhooks.allowHttp': true, 'webhooks.allowPrivate': true } });
    dataDir = rig.t.dataDir;
    sandbox = await setupSender(rig.t, rig.dns, { deliveryType: 'sandbox' });
    expect((await rig.t.api('POST', '/webhooks', { body: { url: hooks.url('/in'), events: ['accepted', 'delivered'], channelId: rig.s.channelId } })).status).toBe(200);
    expect((await rig.t.api('POST', '/suppressions', { body: { channelId: rig.s.channelId, mailType: 'transactional', emails: ['gone@sink.example'] } })).status).toBe(200);
    expect((await rig.t.api('POST', '/suppressions', { body: { channelId: sandbox.channelId, mailType: 'broadcast', emails: ['left-out@sink.example'] } })).status).toBe(200);
    rig.mx.scriptRcpt('later@sink.example', { code: 451, message: '4.7.1 try later' });
    for (let i = 0; i < 6; i++) expect((await send(sandbox, `s${i}@example.net`, { tags: [`t${i % 2}`, 'all'] })).status).toBe(200);
    const delivered = await send(rig.s, 'ann@sink.example', { headers: { 'Idempotency-Key': 'copy-test-1' } });
    expect(delivered.status).toBe(200);
    expect((await send(rig.s, 'bob@sink.example')).status).toBe(200);
    expect((await send(rig.s, 'later@sink.example')).status).toBe(200);
    const b = await rig.t.api('POST', '/send/broadcast', {
      headers: { 'x-service-channel-id': sandbox.channelId },
      body: { from: { email: `news@${sandbox.domain}` }, template: { subject: 'News', text: 'Hello' }, messages: ['a@x.net', 'b@x.net', 'left-out@sink.example'].map((email) => ({ to: [{ email }] })) },
    });
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    ids = { broadcastId: b.body.broadcastId, deliveredId: delivered.body.messageId };
    await waitFor(async () => rig.mx.received.length >= 2 && rig.mx.rcpts.includes('later@sink.example'), { what: 'two deliveries and the refused one', timeout: 20_000 });
    await waitFor(async () => (await rig.t.api('GET', `/broadcasts/${ids.broadcastId}`)).body.status === 'completed', { what: 'the broadcast done', timeout: 20_000 });
    await waitFor(async () => (await rig.t.api('GET', '/statistics/totals')).body.transactional.delivered >= 8, { what: 'deliveries counted', timeout: 20_000 });
    await waitFor(async () => hooks.at('/in').length > 0, { what: 'a webhook attempt', timeout: 20_000 });
    before = await views(rig.t.api, { sandbox, live: rig.s, ...ids });
    // Stopped, not removed: the data folder is what is copied.
    await rig.t.daemon.stop();
  }, 120_000);

  afterAll(async () => {
    await pgDaemon?.stop();
    await Promise.all([rig?.mx.close(), rig?.dns.close(), hooks?.close()]);
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses while a daemon holds the data folder, writing nothing', async () => {
    const holder = holdLock(dataDir);
    try {
      const r = await cli(['store', 'copy-to-postgres', '--url', PG_URL, '--schema', SCHEMA], dataDir);
      expect(r.code).toBe(75);
      expect(r.err).toMatch(/^postrider: store copy-to-postgres needs the daemon stopped .* in use by another postrider daemon \(PID \d+/);
      expect(r.err.split('\n')).toHaveLength(1);
    } finally {
      holder.kill();
      fs.rmSync(path.join(dataDir, 'daemon.lock'), { force: true });
    }
  });

  it('copies the store, and every kind counts the same in PostgreSQL', async () => {
    const r = await cli(['store', 'copy-to-postgres', '--url', PG_URL, '--schema', SCHEMA], dataDir);
    expect(r.code, `${r.out}\n${r.err}`).toBe(0);
    expect(r.out).not.toMatch(/DIFFERS/);
    expect(r.out).toMatch(/^events\s+\d+\s+\d+\s+ok$/m);
    expect(r.out).toMatch(/^eventTerms\s+\d+\s+\d+\s+ok$/m);
    expect(r.out).toMatch(/every count matches/);
    expect(r.err).toMatch(/copied [\d,]+ records in/);
    expect(fs.existsSync(path.join(dataDir, 'daemon.lock'))).toBe(false);
  });

  it('refuses a schema that holds data already, naming it', async () => {
    const r = await cli(['store', 'copy-to-postgres', '--url', PG_URL, '--schema', SCHEMA], dataDir);
    expect(r.code).toBe(73);
    expect(r.err).toMatch(new RegExp(`^postrider: schema ${SCHEMA} of .* is not empty \\(accounts, .*\\); .*DROP SCHEMA ${SCHEMA} CASCADE`));
  });

  it('serves the same account, messages, events and cursors, statistics and suppressions from PostgreSQL', async () => {
    const config = loadConfig({
      env: {},
      overrides: { dataDir, 'http.port': 0, 'log.level': 'silent', 'smtp.enabled': false, ...deliverySettings(rig.dns.address, rig.mx.port), 'delivery.enabled': false, 'store.postgresUrl': PG_URL, 'store.postgresSchema': SCHEMA, 'store.poolSize': 4 },
    });
    pgDaemon = new Daemon(config, createLogger({ level: 'silent' }));
    await pgDaemon.start();
    // No new account: at most the copied one's initial key, still marked unshown (a test daemon never prints it).
    expect(pgDaemon.initialCredentials?.accountId ?? rig.t.accountId).toBe(rig.t.accountId);
    const url = `http://127.0.0.1:${pgDaemon.http.port}`;
    const api: Api = (method, p, o) => apiRequest(url, () => rig.t.apiKey, method, p, o);
    const after = await views(api, { sandbox, live: rig.s, ...ids });
    expect(after).toEqual(before);
    expect(before.queued.flatMap((p) => p.results)).toHaveLength(1);

    // The log goes on after the copied one: a new event's seq is past every copied cursor.
    const fresh = await api('POST', '/send/transactional', {
      headers: { 'X-Service-Channel-Id': sandbox.channelId },
      body: { from: { email: `app@${sandbox.domain}` }, to: [{ email: 'new@example.net' }], subject: 'After the move', text: 'Hi' },
    });
    expect(fresh.status).toBe(200);
    const lastCursor = Number(before.events.at(-1)!.after);
    const next = await api('GET', `/activity/events?after=${lastCursor}`);
    expect(next.body.results.map((e: { messageId: string }) => e.messageId)).toContain(fresh.body.messageId);
    expect(next.body.after).toBeGreaterThan(lastCursor);

    // The idempotent send answers as before: its record came along.
    const replay = await api('POST', '/send/transactional', {
      headers: { 'X-Service-Channel-Id': rig.s.channelId, 'Idempotency-Key': 'copy-test-1' },
      body: { from: { email: `app@${rig.s.domain}` }, to: [{ email: 'ann@sink.example' }], subject: 'Hello ann@sink.example', text: 'Hi', tags: [] },
    });
    expect(replay.status).toBe(200);
    expect(replay.body.messageId).toBe(ids.deliveredId);
  });
});
