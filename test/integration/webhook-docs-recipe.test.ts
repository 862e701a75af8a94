/**
 * The receiver of docs/api.md ("Verifying the signature in Node"), run as written: users copy it,
 * so it must accept the daemon's real signed requests and answer anything else with 401, and
 * never fall over on what an anonymous client sends (a header whose v1 has the hex's length in
 * characters but not in bytes made timingSafeEqual throw, killing the process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

const DOCS = fs.readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');

/** The ```js block that follows "Verifying the signature in Node". */
function recipe(): string {
  const heading = DOCS.indexOf('Verifying the signature in Node');
  expect(heading, 'the recipe in docs/api.md').toBeGreaterThan(-1);
  const start = DOCS.indexOf('```js\n', heading) + '```js\n'.length;
  return DOCS.slice(start, DOCS.indexOf('\n```', start));
}

let t: TestDaemon;
let folder: string;
let receiver: ChildProcess;
let port: number;
let hookId: string;
let exited: string | undefined;

/** Runs the recipe with the signing key; resolves with the port it listens on. */
function startReceiver(key: string): Promise<number> {
  receiver = spawn(process.execPath, [path.join(folder, 'receiver.mjs')], { env: { WEBHOOK_SIGNING_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  receiver.stderr!.on('data', (d) => (stderr += d));
  receiver.on('exit', (c) => (exited = `exited ${c}: ${stderr}`));
  return new Promise<number>((resolve, reject) => {
    receiver.stdout!.once('data', (d) => resolve(Number(String(d).trim())));
    receiver.once('exit', () => reject(new Error(exited)));
  });
}

beforeAll(async () => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-recipe-'));
  const code = recipe();
  expect(code).toContain('.listen(3000)');
  // The recipe listens on 3000; this one on a free port that it prints.
  fs.writeFileSync(path.join(folder, 'receiver.mjs'), code.replace('.listen(3000)', '.listen(0, function () { console.log(this.address().port); })'));
  t = await startDaemon({ 'webhooks.allowHttp': true, 'webhooks.allowPrivate': true, 'webhooks.timeoutMs': 5000 });
  // The key comes with the webhook, the receiver's port once it runs with that key.
  const hook = await t.api('POST', '/webhooks', { body: { url: 'http://127.0.0.1:9/hook', events: ['delivered'] } });
  expect(hook.status, JSON.stringify(hook.body)).toBe(200);
  hookId = hook.body.id;
  port = await startReceiver(hook.body.payloadSigningKey);
  const moved = await t.api('PATCH', `/webhooks/${hookId}`, { body: { url: `http://127.0.0.1:${port}/hook` } });
  expect(moved.status, JSON.stringify(moved.body)).toBe(200);
});

afterAll(async () => {
  await t?.stop();
  receiver?.kill();
  fs.rmSync(folder, { recursive: true, force: true });
});

/** One raw HTTP/1.1 POST (bytes as given, so a header may carry non-ASCII octets); resolves with the status. */
function rawPost(signature: Buffer, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      const head = `POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\nX-Service-Webhook-Signature: `;
      socket.end(Buffer.concat([Buffer.from(head), signature, Buffer.from(`\r\n\r\n${body}`)]));
    });
    let answer = '';
    socket.on('data', (d) => (answer += d));
    socket.on('error', reject);
    socket.on('close', () => (answer ? resolve(Number(answer.split(' ')[1])) : reject(new Error('no answer: the receiver closed the connection (did it crash?)'))));
  });
}

describe('the signature check of docs/api.md, copied as written', () => {
  it("accepts the daemon's signed request (a test event is checked and signed like a delivery)", async () => {
    const test = await t.api('POST', `/webhooks/${hookId}/test`, { body: {} });
    expect(test.body).toMatchObject({ statusCode: 200, error: null });
  });

  it('answers 401 to a forged signature, whatever bytes it holds, and keeps running', async () => {
    const body = '{"eventType":"delivered"}';
    const t0 = Math.floor(Date.now() / 1000);
    const wrongKey = createHmac('sha256', 'whsec_other').update(`${t0}.${body}`).digest('hex');
    expect(await rawPost(Buffer.from(`t=${t0},v1=${wrongKey}`), body)).toBe(401);
    // 64 characters as Node reads the header (latin1), 65 bytes once encoded as UTF-8.
    const nonAscii = Buffer.concat([Buffer.from(`t=${t0},v1=${'a'.repeat(63)}`), Buffer.from([0xe9])]);
    expect(await rawPost(nonAscii, body)).toBe(401);
    expect(await rawPost(Buffer.from(''), body)).toBe(401);
    expect(exited).toBeUndefined();
  });
});
