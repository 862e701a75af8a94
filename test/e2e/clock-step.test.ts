/**
 * `postrider serve` with its wall clock stepped back an hour while it runs, as the issue 29 probe
 * did: libfaketime (Debian's `faketime`) preloaded into the daemon alone, its offset read from a
 * file the test rewrites. Monotonic time is left alone (FAKETIME_DONT_FAKE_MONOTONIC), as a real
 * step (NTP, `date -s`) leaves CLOCK_MONOTONIC alone. Before, an API key used before the step was
 * refused with 429 and Retry-After: 3536 on every request for the hour.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { setupSender } from '../support/sending.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** The thread-safe libfaketime of the `faketime` package, wherever the architecture puts it. */
function libfaketime(): string | undefined {
  for (const dir of fs.existsSync('/usr/lib') ? fs.readdirSync('/usr/lib') : []) {
    const lib = path.join('/usr/lib', dir, 'faketime', 'libfaketimeMT.so.1');
    if (fs.existsSync(lib)) return lib;
  }
  return undefined;
}

const LIB = libfaketime();
let d: ChildDaemon;
let spec: string;
let dns: TestDns;
let rx: WebhookReceiver;

describe.skipIf(!LIB)('a daemon whose wall clock steps back an hour (libfaketime)', () => {
  beforeAll(async () => {
    spec = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-faketime-')), 'offset');
    fs.writeFileSync(spec, '+0\n');
    dns = await startDnsServer();
    rx = await startWebhookReceiver();
    d = new ChildDaemon({
      env: {
        POSTRIDER_DNS_SERVERS: dns.address,
        POSTRIDER_WEBHOOKS_ALLOW_HTTP: 'true',
        POSTRIDER_WEBHOOKS_ALLOW_PRIVATE: 'true',
        LD_PRELOAD: LIB!,
        FAKETIME_TIMESTAMP_FILE: spec,
        // The offset file is read again every second.
        FAKETIME_CACHE_DURATION: '1',
        FAKETIME_DONT_FAKE_MONOTONIC: '1',
      },
    });
    await d.start();
  });

  afterAll(async () => {
    await d?.close();
    await rx?.close();
    await dns?.close();
    if (spec) fs.rmSync(path.dirname(spec), { recursive: true, force: true });
  });

  it('serves an API key that was used before the step', async () => {
    for (let i = 0; i < 5; i++) expect((await d.api('GET', '/channels')).status).toBe(200);

    fs.writeFileSync(spec, '-1h\n');
    // The step has happened once the daemon's Date header (its wall clock) is behind ours.
    await d.whileAlive(
      async () => {
        const res = await fetch(`${d.url}/health`);
        return Date.parse(res.headers.get('date') ?? '') < Date.now() - 30 * 60_000;
      },
      { what: "the daemon's clock to step back" },
    );

    const after = await d.api('GET', '/channels');
    expect(after.headers.get('retry-after')).toBeNull();
    expect(after.status).toBe(200);
  });

  it('signs webhooks with its wall clock, the time a receiver compares t= with, not the scheduler time ahead of it', async () => {
    // Still stepped back an hour (the test before): the scheduler's now() runs ahead of the wall
    // clock until it has caught up, and a signature dated by it would be an hour off.
    const s = await setupSender(d, dns, { deliveryType: 'sandbox' });
    const hook = await d.api('POST', '/webhooks', { body: { url: rx.url('/signed'), events: ['processed'], channelId: s.channelId } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    const sent = await d.api('POST', '/send/transactional', { headers: { 'x-service-channel-id': s.channelId }, body: { from: { email: `app@${s.domain}` }, to: [{ email: 'ann@inbox-mail.net' }], subject: 'hi', text: 'hello' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const [req] = await d.whileAlive(() => (rx.at('/signed').length > 0 ? rx.at('/signed') : undefined), { what: 'the processed webhook' });
    const t = Number(/^t=(\d+),/.exec(String(req.headers['x-service-webhook-signature']))?.[1]);
    const daemonWall = Date.now() / 1000 - 3600;
    expect(Math.abs(t - daemonWall), `t=${t}, the daemon's wall clock ${Math.round(daemonWall)}`).toBeLessThan(300);
  });
});
