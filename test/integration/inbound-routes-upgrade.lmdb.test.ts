/**
 * An LMDB data folder written before the domain index of enabled inbound routes (where
 * postmaster@ goes, RFC 5321 4.5.1) gets it at the data upgrade, once: before it the older
 * routes are not found, after it the domain's oldest enabled route is, and a second upgrade adds
 * nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import type { NewInboundRouteInput } from '../../src/store/port/inbound-routes.js';
import { dropEnabledRouteIndex } from '../support/lmdb-older-store.js';
import { waitFor } from '../support/wait.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('the domain index of enabled inbound routes in an older LMDB data folder', () => {
  it('is added by the data upgrade, once', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-routes-'));
    dirs.push(dataDir);
    let store = new LmdbStore({ dataDir });
    await store.start();
    const accountId = (await store.accounts.create({ name: 'a', state: 'active' })).id;
    const channelId = (await store.channels.create({ accountId, name: 'c', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 100 })).id;
    const key = { selector: 's', algorithm: 'rsa' as const, privateKeyPem: 'pem', dnsValue: 'v=DKIM1; k=rsa; p=x' };
    const domainId = (await store.domains.create({ accountId, name: 'acme-shop.com', channelIds: [channelId], key, returnPath: [], maxPerAccount: 100 })).id;
    const input = (address: string, enabled: boolean): NewInboundRouteInput => ({ accountId, channelId, domainId, address, url: 'https://app.example.org/in', enabled, additionalHeaders: [], maxPerAccount: 10 });
    for (const [address, enabled] of [['old@acme-shop.com', false], ['support@acme-shop.com', true], ['sales@acme-shop.com', true]] as const) {
      const { route } = await store.inboundRoutes.create(input(address, enabled));
      await waitFor(() => Date.now() > Date.parse(route.createdAt), { what: `the clock past ${route.createdAt}` });
    }
    await store.stop();

    await dropEnabledRouteIndex(dataDir);
    store = new LmdbStore({ dataDir });
    await store.start();
    try {
      expect(await store.inboundRoutes.oldestEnabledOnDomain('acme-shop.com')).toBeUndefined();
      expect((await store.upgradeData()).routesIndexed).toBe(2);
      expect((await store.inboundRoutes.oldestEnabledOnDomain('acme-shop.com'))?.address).toBe('support@acme-shop.com');
      expect((await store.upgradeData()).routesIndexed).toBe(0);
    } finally {
      await store.stop();
    }
  });
});
