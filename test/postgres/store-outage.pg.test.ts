/**
 * PostgreSQL out of reach, through the real daemon (issue 32, Faults): while the database is
 * down a send answers 503 store_unavailable with Retry-After over HTTP and 451 4.3.0 over SMTP
 * (never a 200 or 250 for what was not committed), GET /ready says the store is not ready, and
 * once PostgreSQL is back the same daemon serves again by itself: no restart, and every message
 * acknowledged before the outage is still there.
 *
 * It needs a PostgreSQL of its own to stop (crash() is `pg_ctl stop -m immediate`, as a crash),
 * so it starts one beside the run's shared cluster.
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

describe('PostgreSQL down and back under a running daemon', () => {
  let pg: PostgresCluster;
  let t: TestDaemon;
  let dns: TestDns;
  let s: Sender;

  beforeAll(async () => {
    pg = await startPostgres();
    ({ t, dns } = await startDaemonWithDns({ 'store.postgresUrl': pg.url, 'store.postgresSchema': 'outage', 'smtp.enabled': true, 'smtp.port': 0 }));
    s = await setupSender(t, dns, { deliveryType: 'sandbox' });
  }, 120_000);

  afterAll(async () => {
    await stopDaemonWithDns({ t, dns });
    await pg?.stop();
  });

  const send = (to: string) =>
    t.api('POST', '/send/transactional', { headers: { 'X-Service-Channel-Id': s.channelId }, body: { from: { email: `app@${s.domain}` }, to: [{ email: to }], subject: 'Hi', text: 'Hello' } });

  const smtp = () =>
    nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.smtp!.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, auth: { user: s.channelId, pass: t.apiKey } });

  it('answers 503 and 451 while it is down, reports not ready, and serves again by itself', async () => {
    const before = await send('before@example.net');
    expect(before.status).toBe(200);

    await pg.crash();
    const down = await send('during@example.net');
    expect(down.status, JSON.stringify(down.body)).toBe(503);
    expect(down.body).toMatchObject({ code: 'store_unavailable' });
    expect(down.headers.get('retry-after')).toBe('5');
    const refused = await smtp().sendMail({ from: `app@${s.domain}`, to: 'during-smtp@example.net', subject: 'Hi', text: 'Hello' }).then(
      () => null,
      (err: { responseCode?: number; response?: string }) => err,
    );
    expect(refused?.responseCode).toBe(451);
    expect(refused?.response).toMatch(/^451 4\.3\.0 /);
    await waitFor(async () => (await t.api('GET', '/ready')).status === 503, { what: 'GET /ready to say not ready' });

    await pg.start();
    await waitFor(async () => (await t.api('GET', '/ready')).status === 200, { what: 'GET /ready to recover', timeout: 30_000 });
    const after = await send('after@example.net');
    expect(after.status).toBe(200);
    expect((await t.daemon.store.messages.get(before.body.messageId))?.recipients).toEqual(['before@example.net']);
    const list = await t.api('GET', '/activity/messages', { headers: { 'X-Service-Channel-Id': s.channelId } });
    const recipients = (list.body.results as { recipients?: string[]; to?: { email: string }[] }[]).length;
    expect(recipients).toBe(2);
  });
});
