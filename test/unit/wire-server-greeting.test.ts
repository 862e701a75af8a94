/**
 * The pause before the 220 greeting (src/smtp/wire-server.ts): none on submission, the inbound
 * listener's `inbound.greetingDelayMs` to catch early talkers. The library's own pause is a timer,
 * so under fake timers a greeting that waits for one never comes until the clock is moved: these
 * tests need no wall-clock bounds.
 */
import net from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WireServer } from '../../src/smtp/wire-server.js';

const servers: WireServer<number>[] = [];
const sockets: net.Socket[] = [];

afterEach(async () => {
  vi.useRealTimers();
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

/** A listener with the hooks admitting everyone; `started` resolves once a session exists (its timer armed). */
async function listener(greetingDelayMs: number): Promise<{ port: number; started: () => Promise<void> }> {
  let onStart: (() => void) | undefined;
  const server = new WireServer<number>(
    { name: 'mx.postrider-test.net', disableReverseLookup: true, authOptional: true, logger: false },
    {
      admit: () => ({ admitted: 1 }),
      started: () => onStart?.(),
      refuseCommand: () => null,
      idleTimeoutMs: () => 60_000,
      closing: () => undefined,
    },
    greetingDelayMs,
  );
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const port = (server.server.address() as net.AddressInfo).port;
  return {
    port,
    // connect() calls started() just before it arms the greeting: a microtask later, the timer is there.
    started: () => new Promise<void>((resolve) => (onStart = () => queueMicrotask(resolve))),
  };
}

/** Connects; resolves with the first line the server writes. */
function firstLine(port: number, write?: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  sockets.push(socket);
  if (write !== undefined) socket.write(write);
  return new Promise((resolve, reject) => {
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n');
      if (end >= 0) resolve(buf.slice(0, end));
    });
    socket.on('error', reject);
  });
}

describe('the greeting of a new SMTP connection', () => {
  it('comes at once with no pause (submission): no timer stands before it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { port } = await listener(0);
    // The library's fixed 100 ms timer would never fire under the fake clock: this would hang.
    expect(await firstLine(port)).toMatch(/^220 mx\.postrider-test\.net ESMTP/);
  });

  it("comes when the pause set (inbound.greetingDelayMs) is over, not after the library's 100 ms", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { port, started } = await listener(40);
    const session = started();
    const line = firstLine(port);
    await session;
    vi.advanceTimersByTime(40);
    expect(await line).toMatch(/^220 /);
  });

  it('answers a client that talks before the greeting with 421 and closes the session', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { port } = await listener(100);
    // The clock never moves: the greeting cannot come first.
    const line = await firstLine(port, 'EHLO early.example.net\r\n');
    expect(line).toMatch(/^421 .*talk too soon/i);
    const socket = sockets.at(-1)!;
    if (!socket.closed) await once(socket, 'close');
  });
});
