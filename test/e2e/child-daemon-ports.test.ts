/**
 * The test harness's own daemon (test/support/child-daemon.ts) when a port it picked is taken
 * before the daemon binds it, as happens when parallel test files open connections (their
 * ephemeral ports come from the same range as freePort's): it starts again on other ports
 * instead of failing the test file that wanted a daemon.
 */
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';

const taken = vi.hoisted(() => ({ port: 0, handedOut: 0 }));

vi.mock('../support/cli.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../support/cli.js')>();
  // The first port handed out is one a listener of this test already holds.
  return { ...real, freePort: async () => (taken.handedOut++ === 0 ? taken.port : real.freePort()) };
});

const { ChildDaemon } = await import('../support/child-daemon.js');

let holder: net.Server | undefined;
let d: InstanceType<typeof ChildDaemon> | undefined;

afterEach(async () => {
  await d?.close();
  await new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve()));
});

describe('ChildDaemon ports', () => {
  it('starts on other ports when the one it picked is taken before the daemon binds it', async () => {
    // Whatever holds the port: the harness's readiness probe may reach it before the daemon's exit is seen.
    holder = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder!.listen(0, '127.0.0.1', resolve));
    taken.port = (holder.address() as net.AddressInfo).port;

    d = new ChildDaemon();
    await d.start();
    expect(d.stderr).toMatch(/HTTP API cannot listen on 127\.0\.0\.1:\d+: the address is already in use/);
    expect(d.httpPort).not.toBe(taken.port);
    expect((await fetch(`${d.url}/ready`)).status).toBe(200);
  });
});
