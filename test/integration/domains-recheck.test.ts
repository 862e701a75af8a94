/**
 * The re-check component's scheduling on a real store, with the verification itself faked so
 * timing is under the test's control.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SendingDomain } from '../../src/domain/sending-domain.js';
import { DomainRecheck } from '../../src/domains/recheck.js';
import { createLogger } from '../../src/log/logger.js';
import { createDomain, getDomain, recordDomainCheck } from '../../src/store/domains.js';
import { Store } from '../../src/store/env.js';

let dir: string;
let store: Store;
const logger = createLogger({ level: 'silent' });

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-recheck-'));
  store = new Store({ dataDir: dir });
  await store.start();
});

afterEach(async () => {
  await store.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A domain recorded as verified (every record matched once). */
async function verifiedDomain(name: string): Promise<SendingDomain> {
  const d = await createDomain(store, {
    accountId: 'acct',
    name,
    channelIds: [],
    key: { selector: 'pr202601abcd', algorithm: 'ed25519', privateKeyPem: 'PEM', dnsValue: 'v=DKIM1; k=ed25519; p=AAAA' },
    returnPath: [{ type: 'mx', host: `bounces.${name}`, value: '10 mx.local' }],
    maxPerAccount: 100,
  });
  const returnPath = d.returnPath.map((record) => ({ record, outcome: 'match' as const }));
  return (await recordDomainCheck(store, d.id, { keys: { [d.activeKey.selector]: 'match' }, returnPath }, new Date().toISOString()))!;
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('DomainRecheck', () => {
  it('re-checks on its timer and never runs twice at once, even when a run outlasts the interval', async () => {
    await verifiedDomain('one.com');
    let active = 0;
    let maxActive = 0;
    let calls = 0;
    const recheck = new DomainRecheck({
      store,
      logger,
      intervalMs: 5,
      firstRunDelayMs: 0,
      domains: {
        verify: async (id) => {
          calls++;
          maxActive = Math.max(maxActive, ++active);
          await sleep(40);
          active--;
          return getDomain(store, id);
        },
      },
    });
    await recheck.start();
    await sleep(200);
    await recheck.stop();
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(maxActive).toBe(1);
  });

  it('stop() waits for the run in progress, which checks no further domain, and nothing runs afterwards', async () => {
    await verifiedDomain('first.com');
    await verifiedDomain('second.com');
    const gate = deferred();
    const entered = deferred();
    const seen: string[] = [];
    const recheck = new DomainRecheck({
      store,
      logger,
      intervalMs: 5,
      firstRunDelayMs: 0,
      domains: {
        verify: async (id) => {
          seen.push(id);
          entered.resolve();
          await gate.promise;
          return getDomain(store, id);
        },
      },
    });
    await recheck.start();
    await entered.promise;
    let stopped = false;
    const stopping = recheck.stop().then(() => (stopped = true));
    await sleep(20);
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    await sleep(30);
    expect(seen).toHaveLength(1);
  });

  it('reports how many domains lost verification and keeps going when one check throws', async () => {
    const bad = await verifiedDomain('bad.com');
    const lost = await verifiedDomain('lost.com');
    const recheck = new DomainRecheck({
      store,
      logger,
      intervalMs: 60_000,
      domains: {
        verify: async (id) => {
          if (id === bad.id) throw new Error('boom');
          return { ...getDomain(store, id)!, verified: false };
        },
      },
    });
    expect(await recheck.runOnce()).toEqual({ checked: 1, lost: 1 });
    expect(lost.verified).toBe(true);
  });

  it('does not keep the process alive while waiting for the next run', async () => {
    const recheck = new DomainRecheck({ store, logger, intervalMs: 60_000, domains: { verify: async () => undefined } });
    await recheck.start();
    const timer = (recheck as unknown as { timer: NodeJS.Timeout }).timer;
    expect(timer.hasRef()).toBe(false);
    await recheck.stop();
  });
});
