/**
 * A PostgreSQL that leaves a client's call unanswered, through the real daemon (cluster mode):
 * the server hung (SIGSTOP: connections open, nothing answers) gave a send no HTTP answer at all,
 * still none after 150 s, and an SMTP submission no reply. Every store call made for a request now
 * has store.requestTimeoutMs: past it the send answers 503 store_timeout with Retry-After (SMTP
 * 451 4.3.0, as does the inbound listener's RCPT), and a retry with the same Idempotency-Key once
 * the server answers again stores the message once.
 *
 * A claim on the key that PostgreSQL takes only after the deadline (here: held back by a row lock
 * of the test's own transaction) must not hold the key for the claim lease (5 minutes) once it is
 * taken: the retry is served as soon as the late claim has landed. A commit that lands after the
 * deadline keeps the key claimed until then: the retry replays its response (not 409 conflict).
 *
 * Its own PostgreSQL (test/support/postgres.ts), to freeze and let run again.
 */
import nodemailer from 'nodemailer';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { sendToInbound } from '../support/inbound.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const DEADLINE_MS = 2_000;
const SCHEMA = 'store_timeout';

describe('PostgreSQL leaving a request unanswered under a running daemon', () => {
  let pg: PostgresCluster;
  let t: TestDaemon;
  let dns: TestDns;
  let s: Sender;

  beforeAll(async () => {
    pg = await startPostgres();
    ({ t, dns } = await startDaemonWithDns({
      'store.postgresUrl': pg.url,
      'store.postgresSchema': SCHEMA,
      'store.requestTimeoutMs': DEADLINE_MS,
      'smtp.enabled': true,
      'smtp.port': 0,
      'inbound.enabled': true,
      'inbound.port': 0,
    }));
    s = await setupSender(t, dns, { deliveryType: 'sandbox' });
  }, 120_000);

  afterAll(async () => {
    await pg?.stop(); // lets a frozen server run first
    await stopDaemonWithDns({ t, dns });
  });

  const send = (to: string, key: string) =>
    t.api('POST', '/send/transactional', {
      headers: { 'X-Service-Channel-Id': s.channelId, 'Idempotency-Key': key },
      body: { from: { email: `app@${s.domain}` }, to: [{ email: to }], subject: 'Hi', text: 'Hello' },
      signal: AbortSignal.timeout(DEADLINE_MS * 5),
    });

  const smtp = () =>
    nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.smtp!.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, auth: { user: s.channelId, pass: t.apiKey } });

  const messagesTo = async (to: string): Promise<string[]> => {
    const list = await t.api('GET', `/activity/messages?recipient=${encodeURIComponent(to)}`, { headers: { 'X-Service-Channel-Id': s.channelId } });
    expect(list.status).toBe(200);
    return (list.body.results as { messageId: string }[]).map((m) => m.messageId);
  };

  /** Retries the send until it is stored: 503 store_timeout while the key's first try is unsettled. */
  const retryUntilStored = async (to: string, key: string) => {
    let last: Awaited<ReturnType<typeof send>> | undefined;
    await waitFor(
      async () => {
        last = await send(to, key);
        return last.status !== 503;
      },
      { what: 'the retry to be answered other than 503', timeout: 15_000 },
    );
    expect(last!.status, JSON.stringify(last!.body)).toBe(200);
    return last!;
  };

  it('answers 503 store_timeout and 451 4.3.0 within the deadline while PostgreSQL hangs; the retry with the key stores the message once', async () => {
    expect((await send('before@example.net', 'hang-before')).status).toBe(200);

    const thaw = pg.freeze();
    try {
      const started = Date.now();
      const hung = await send('hung@example.net', 'hang-1');
      expect(hung.status, JSON.stringify(hung.body)).toBe(503);
      expect(hung.body).toMatchObject({ code: 'store_timeout' });
      expect(hung.headers.get('retry-after')).toBe('5');
      expect(Date.now() - started).toBeLessThan(DEADLINE_MS * 3);

      const refused = await smtp()
        .sendMail({ from: `app@${s.domain}`, to: 'hung-smtp@example.net', subject: 'Hi', text: 'Hello' })
        .then(() => null, (err: { responseCode?: number; response?: string }) => err);
      expect(refused?.responseCode).toBe(451);
      expect(refused?.response).toMatch(/^451 4\.3\.0 /);

      // The inbound listener's RCPT reads the routes.
      const inbound = await sendToInbound(t.daemon.inbound!.port, 'someone@example.org', 'Subject: Hi\r\n\r\nHello\r\n').then(
        () => null,
        (err: { responseCode?: number; response?: string }) => err,
      );
      expect(inbound?.response).toMatch(/^451 4\.3\.0 /);
    } finally {
      thaw();
    }

    const stored = await retryUntilStored('hung@example.net', 'hang-1');
    expect(await messagesTo('hung@example.net')).toEqual([stored.body.messageId]);
  }, 60_000);

  it('serves the retry once a claim that PostgreSQL took after the deadline has landed', async () => {
    const probe = await send('probe@example.net', 'late-claim-probe');
    expect(probe.status).toBe(200);
    const sql = postgres(pg.url, { max: 1, onnotice: () => undefined, connection: { search_path: SCHEMA } });
    try {
      const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`SELECT account_id FROM idempotency_records WHERE key = 'late-claim-probe'`;
      // An uncommitted claim row of the test's own: the daemon's claim of the key waits for it.
      let late: Awaited<ReturnType<typeof send>> | undefined;
      await sql
        .begin(async (tx) => {
          await tx`INSERT INTO idempotency_claims (account_id, key, claim_no, until_ms) VALUES (${accountId}, 'late-claim', 'test', 0)`;
          late = await send('late@example.net', 'late-claim');
          throw new Error('rollback');
        })
        .catch((err: Error) => expect(err.message).toBe('rollback'));
      expect(late?.status, JSON.stringify(late?.body)).toBe(503);
      expect(late?.body).toMatchObject({ code: 'store_timeout' });
    } finally {
      await sql.end();
    }
    const stored = await retryUntilStored('late@example.net', 'late-claim');
    expect(await messagesTo('late@example.net')).toEqual([stored.body.messageId]);
  }, 60_000);

  it('keeps the key of a send whose commit had no answer in time until that commit has landed: the retry replays its response', async () => {
    const probe = await send('probe2@example.net', 'late-commit-probe');
    expect(probe.status).toBe(200);
    const sql = postgres(pg.url, { max: 1, onnotice: () => undefined, connection: { search_path: SCHEMA } });
    let retry: Promise<Awaited<ReturnType<typeof send>>> | undefined;
    try {
      const [{ account_id: accountId }] = await sql<{ account_id: string }[]>`SELECT account_id FROM idempotency_records WHERE key = 'late-commit-probe'`;
      // An uncommitted record of the key, the test's own: the send's commit (message and record in
      // one transaction) waits for it past the deadline, and lands once it is rolled back.
      await sql
        .begin(async (tx) => {
          await tx`INSERT INTO idempotency_records (account_id, key, expires_at_ms, doc) VALUES (${accountId}, 'late-commit', 0, '{}'::jsonb)`;
          const late = await send('late-commit@example.net', 'late-commit');
          expect(late.status, JSON.stringify(late.body)).toBe(503);
          expect(late.body).toMatchObject({ code: 'store_timeout' });
          // The retry while that commit is still held back: it must wait for it, not take the key.
          retry = send('late-commit@example.net', 'late-commit');
          // Time for a retry that took the key to reach its own commit (where it would wait as well).
          await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS / 4));
          throw new Error('rollback');
        })
        .catch((err: Error) => expect(err.message).toBe('rollback'));
    } finally {
      await sql.end();
    }
    // Waiting, then the first response replayed; before, the key was free for it and its commit
    // then met the late one's record: 409 conflict.
    const answered = await retry!;
    expect([200, 503], JSON.stringify(answered.body)).toContain(answered.status);
    const stored = await retryUntilStored('late-commit@example.net', 'late-commit');
    const ids = await messagesTo('late-commit@example.net');
    expect(ids).toEqual([stored.body.messageId]);
    if (answered.status === 200) expect(answered.body.messageId).toBe(ids[0]);
  }, 60_000);
});
