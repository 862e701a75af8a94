/**
 * The Sources page in chromium (issue 35) against a daemon with two sending sources, 127.0.0.2
 * and 127.0.0.3, whose PTR records are in a test DNS server: .2's PTR names its EHLO name, which
 * resolves back to it (confirmed); .3's PTR names another host. The page shows both with their
 * check, and the pools with their weights and the mail type each is the default of. The gates'
 * parts (warm-up, shaping, health) come from gates not wired into this build: the second test adds
 * them to the daemon's real answer in the browser, with a field the page does not know, and lifts
 * a shaping entry (the DELETE is answered in the browser too).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { useRig } from './harness.js';

let dns: TestDns;

// Before useRig's hooks: the PTR records exist before the daemon's reverse DNS check at start,
// and the server closes after the rig stops (after-hooks run in reverse order).
beforeAll(async () => {
  dns = await startDnsServer();
  dns.set('2.0.0.127.in-addr.arpa', 'PTR', ['mta2.sender.test']);
  dns.set('mta2.sender.test', 'A', ['127.0.0.2']);
  dns.set('3.0.0.127.in-addr.arpa', 'PTR', ['somebody-else.test']);
});

afterAll(async () => {
  await dns?.close();
});

const rig = useRig({
  daemon: () => ({
    'dns.servers': [dns.address],
    'delivery.sources': [
      { name: 'ip2', address: '127.0.0.2', ehloName: 'mta2.sender.test' },
      { name: 'ip3', address: '127.0.0.3', ehloName: 'mta3.sender.test', rate: 20 },
    ],
    'delivery.pools': { tx: [{ source: 'ip2', weight: 3 }, { source: 'ip3', weight: 1 }], bulk: [{ source: 'ip3', weight: 1 }] },
    'delivery.defaultPools.transactional': 'tx',
    'delivery.defaultPools.broadcast': 'bulk',
  }),
});

const card = (name: string) => rig.page.getByRole('article', { name });

describe('sources page', () => {
  it('lists both sources with their reverse DNS check, and the pools with their default mail types', async () => {
    await rig.visit('/sources');
    const page = rig.page;
    await card('ip2').getByText('confirmed').waitFor();
    expect(await card('ip2').getByText('127.0.0.2').count()).toBe(1);
    await card('ip2').getByText('PTR mta2.sender.test, which resolves back to the address').waitFor();
    await card('ip3').getByText('PTR names another host').waitFor();
    await card('ip3').getByText('PTR somebody-else.test, not the EHLO name mta3.sender.test').waitFor();
    await card('ip3').getByText('20 messages/s').waitFor();

    const tx = page.getByRole('row', { name: /^tx / });
    await tx.getByText('ip2 (weight 3, 75%)').waitFor();
    await tx.getByText('transactional mail').waitFor();
    await page.getByRole('row', { name: /^bulk / }).getByText('broadcast mail').waitFor();

    await rig.checkA11y();
    await rig.screenshot('sources');
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await page.evaluate('document.documentElement.scrollWidth'), 'no sideways scroll at 360 px').toBeLessThanOrEqual(360);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("shows the gates' parts when the daemon gives them, ignores fields it does not know, and lifts a shaping entry", async () => {
    const page = rig.page;
    const lifted: string[] = [];
    const until = new Date(Date.now() + 2 * 3_600_000).toISOString();
    await page.route('**/ops/sources', async (route) => {
      const real = (await (await route.fetch()).json()) as { results: Record<string, unknown>[] };
      const [ip2, ip3] = real.results;
      ip2.warmup = { start: '2026-12-01', day: 5, days: 30, complete: false, sites: { google: { today: { sent: 12, cap: 50 }, hour: { sent: 2, cap: 5 } } }, someday: 'a field of a later version' };
      ip2.shaping = { active: lifted.length > 0 ? [] : [{ site: 'yahoo', rule: 'yahoo-ts04', action: 'suspend', since: Date.now(), until }] };
      ip2.health = { status: 'ok', consecutiveFailures: 0 };
      ip3.health = { status: 'out', until: Date.now() + 600_000, reason: 'EADDRNOTAVAIL: address not available', consecutiveFailures: 4 };
      ip3.futureGate = { anything: [1, 2, 3] };
      await route.fulfill({ json: real });
    });
    await page.route('**/ops/sources/*/shaping/*', async (route) => {
      lifted.push(`${route.request().method()} ${new URL(route.request().url()).pathname}`);
      await route.fulfill({ status: 204 });
    });
    try {
      await rig.visit('/sources');
      const ip2 = card('ip2');
      await ip2.getByText('Day 5 of 30').waitFor();
      await ip2.getByRole('row', { name: /google/ }).getByText('12 of 50', { exact: true }).waitFor();
      await ip2.getByRole('row', { name: /google/ }).getByText('2 of 5', { exact: true }).waitFor();
      await ip2.getByText('yahoo', { exact: true }).waitFor();
      await ip2.getByText('yahoo-ts04').waitFor();
      await card('ip3').getByText('out', { exact: true }).waitFor();
      await card('ip3').getByText(/EADDRNOTAVAIL/).waitFor();
      await rig.checkA11y();
      await rig.screenshot('sources-gates');

      await ip2.getByRole('button', { name: 'Lift the shaping of ip2 at yahoo' }).click();
      await ip2.getByText('No shaping rule holds this source back now.').waitFor();
      expect(lifted).toEqual(['DELETE /ops/sources/ip2/shaping/yahoo']);
    } finally {
      await page.unrouteAll({ behavior: 'ignoreErrors' });
    }
  });
});
