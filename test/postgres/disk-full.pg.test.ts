/**
 * PostgreSQL's disk fills under a running daemon (cluster mode's full disk): the database's
 * tables live in a tablespace on a tmpfs of 32 MB, so sends of 400 KB fill it. PostgreSQL then
 * refuses the writes with SQLSTATE 53100 disk_full, which the API answers as LMDB's full disk is:
 * 507 storage_full over HTTP and 452 4.3.1 over SMTP, nothing stored; the daemon keeps serving
 * (reads answer as before),
 * and once the file system has room again the same daemon accepts sends again, with every
 * message acknowledged before still there.
 *
 * Needs root (mount -t tmpfs); skipped otherwise, as the network namespace tests are.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { postgresBinDir, startPostgres, type PostgresCluster } from '../support/postgres.js';
import { setupSender, type Sender } from '../support/sending.js';

/** Why a tmpfs cannot be mounted here, or null when it can. */
function tmpfsUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'not root';
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-tmpfs-probe-'));
  try {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]);
    if (mounted.status !== 0) return `mount -t tmpfs refused: ${String(mounted.stderr).trim()}`;
    spawnSync('umount', [probe]);
    return null;
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}

const unavailable = tmpfsUnavailable();

function mustRun(cmd: string, args: string[], input?: string): void {
  const r = spawnSync(cmd, args, { input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
}

describe.skipIf(unavailable !== null)('PostgreSQL whose disk fills under a running daemon', () => {
  let pg: PostgresCluster;
  let t: TestDaemon;
  let dns: TestDns;
  let s: Sender;
  let mountDir: string;
  let mounted = false;

  beforeAll(async () => {
    pg = await startPostgres();
    mountDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-pg-tablespace-'));
    mustRun('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', mountDir]);
    mounted = true;
    // The tablespace's folder belongs to the server's user (the cluster's folder has it).
    const owner = fs.statSync(pg.dir);
    const location = path.join(mountDir, 'ts');
    fs.mkdirSync(location);
    fs.chownSync(location, owner.uid, owner.gid);
    // Superuser over the cluster's socket (trust): the database moves to the small tablespace
    // before the daemon creates its tables there. The WAL stays on the cluster's own disk.
    const sql = `CREATE TABLESPACE small LOCATION '${location}';\nALTER DATABASE postrider SET TABLESPACE small;\n`;
    mustRun(path.join(postgresBinDir(), 'psql'), ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', pg.dir, '-p', String(pg.port), '-U', 'postgres', '-d', 'postgres'], sql);
    ({ t, dns } = await startDaemonWithDns({ 'store.postgresUrl': pg.url, 'store.postgresSchema': 'diskfull', 'smtp.enabled': true, 'smtp.port': 0 }));
    s = await setupSender(t, dns, { deliveryType: 'sandbox' });
  }, 120_000);

  afterAll(async () => {
    if (t) await stopDaemonWithDns({ t, dns });
    await pg?.stop();
    if (mounted) spawnSync('umount', ['-l', mountDir]);
    if (mountDir) fs.rmSync(mountDir, { recursive: true, force: true });
  });

  const send = (to: string, text: string) =>
    t.api('POST', '/send/transactional', { headers: { 'X-Service-Channel-Id': s.channelId }, body: { from: { email: `app@${s.domain}` }, to: [{ email: to }], subject: 'Hi', text } });

  it('answers 507 storage_full and 452 4.3.1 once it is full, keeps serving reads, and takes sends again once there is room', async () => {
    const accepted: string[] = [];
    let full: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < 300 && !full; i++) {
      // Incompressible text (PostgreSQL compresses large values): 400 KB a send.
      const r = await send(`r${i}@example.net`, crypto.randomBytes(300_000).toString('base64'));
      if (r.status === 200) accepted.push(r.body.messageId as string);
      else full = r;
    }
    expect(accepted.length, 'sends fit before the disk was full').toBeGreaterThan(0);
    expect(full?.status, JSON.stringify(full?.body)).toBe(507);
    expect(full?.body).toMatchObject({ code: 'storage_full' });

    const refused = await nodemailer
      .createTransport({ host: '127.0.0.1', port: t.daemon.smtp!.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, auth: { user: s.channelId, pass: t.apiKey } })
      .sendMail({ from: `app@${s.domain}`, to: 'full-smtp@example.net', subject: 'Hi', text: crypto.randomBytes(300_000).toString('base64') })
      .then(
        () => null,
        (err: { responseCode?: number; response?: string }) => err,
      );
    expect(refused?.responseCode).toBe(452);
    expect(refused?.response).toMatch(/^452 4\.3\.1 /);
    expect((await t.api('GET', '/health')).status).toBe(200);
    for (let i = 0; i < 20; i++) {
      const read = await t.api('GET', `/activity/messages/${accepted[0]!}`);
      expect(read.status, JSON.stringify(read.body)).toBe(200);
    }

    // Room again, without a restart of either.
    mustRun('mount', ['-o', 'remount,size=512m', mountDir]);
    const after = await send('after@example.net', 'Hello again');
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    for (const id of [accepted[0]!, accepted[accepted.length - 1]!]) {
      expect((await t.api('GET', `/activity/messages/${id}`)).status).toBe(200);
    }
  }, 180_000);
});
