/**
 * The re-check component's scheduling on a real store, with the verification itself faked and
 * its timers on vitest's fake clock, so timing is under the test's control: a "nothing ran"
 * check advances the clock past every run that could have been due instead of sleeping.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SendingDomain } from '../../src/domain/sending-domain.js';
import { LocalCoordination } from '../../src/coordination/local.js';
import { DomainRecheck } from '../../src/domains/recheck.js';
import { createLogger } from '../../src/log/logger.js';
import type { StorePort } from '../../src/store/port/index.js';
import { openStore } from '../support/store.js';
import { waitFor } from '../support/wait.js';

let dir: string;
let store: StorePort;
const logger = createLogger({ level: 'silent' });

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-recheck-'));
  store = await openStore(dir);
});

afterEach(async () => {
  // LMDB resets its read transactions on a zero-delay setTimeout: let those run before closing.
  if (vi.isFakeTimers()) await vi.runOnlyPendingTimersAsync();
  vi.useRealTimers();
  await store.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A domain recorded as verified (every record matched once). */
async function verifiedDomain(name: string): Promise<SendingDomain> {
  const d = await store.domains.create({
    accountId: 'acct',
    name,
    channelIds: [],
    key: { selector: 'pr202601abcd', algorithm: 'ed25519', privateKeyPem: 'PEM', dnsValue: 'v=DKIM1; k=ed25519; p=AAAA' },
    returnPath: [{ type: 'mx', host: `bounces.${name}`, value: '10 mx.local' }],
    maxPerAccount: 100,
  });
  const returnPath = d.returnPath.map((record) => ({ record, outcome: 'match' as const }));
  return (await store.domains.recordCheck(d.id, { keys: { [d.activeKey.selector]: 'match' }, returnPath }, new Date().toISOString()))!;
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Fakes setTimeout, which DomainRecheck schedules with, once the store is set up. LMDB's
 * read-transaction resets use it too; they only wait for the next advance.
 */
function fakeTimers(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
}

/** A logger that records the message of every line, to see each run's completion line. */
function recordingLogger(): { logger: ReturnType<typeof createLogger>; messages: string[] } {
  const messages: string[] = [];
  const destination = { write: (line: string) => void messages.push(JSON.parse(line).msg) };
  return { logger: createLogger({ level: 'debug', destination }), messages };
}

const RUN_DONE = 'domain re-check done';

describe('DomainRecheck', () => {
  it('re-checks on its timer and never runs twice at once, even when a run outlasts the interval', async () => {
    await verifiedDomain('one.com');
    let active = 0;
    let maxActive = 0;
    let calls = 0;
    const { logger, messages } = recordingLogger();
    fakeTimers();
    const recheck = new DomainRecheck({
      store,
      coordination: new LocalCoordination({ nodeId: 'test' }),
      logger,
      intervalMs: 5,
      firstRunDelayMs: 0,
      domains: {
        verify: async (id) => {
          calls++;
          maxActive = Math.max(maxActive, ++active);
          await sleep(40);
          active--;
          return store.domains.get(id);
        },
      },
    });
    await recheck.start();
    // 200 ms in interval steps: each 40 ms run outlasts eight intervals, none of which may start
    // a second run beside it.
    for (let ms = 0; ms < 200; ms += 5) await vi.advanceTimersByTimeAsync(5);
    await waitFor(() => messages.filter((m) => m === RUN_DONE).length >= 2, { what: 'two completed runs' });
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(maxActive).toBe(1);
    const stopping = recheck.stop();
    await vi.advanceTimersByTimeAsync(40); // the run in progress, if any, ends
    await stopping;
  });

  it('stop() waits for the run in progress, which checks no further domain, and nothing runs afterwards', async () => {
    await verifiedDomain('first.com');
    await verifiedDomain('second.com');
    const gate = deferred();
    const entered = deferred();
    const seen: string[] = [];
    const { logger, messages } = recordingLogger();
    fakeTimers();
    const recheck = new DomainRecheck({
      store,
      coordination: new LocalCoordination({ nodeId: 'test' }),
      logger,
      intervalMs: 5,
      firstRunDelayMs: 0,
      domains: {
        verify: async (id) => {
          seen.push(id);
          entered.resolve();
          await gate.promise;
          return store.domains.get(id);
        },
      },
    });
    await recheck.start();
    await vi.advanceTimersByTimeAsync(1);
    await entered.promise;
    let stopped = false;
    let runsDoneAtStop = -1;
    const stopping = recheck.stop().then(() => {
      stopped = true;
      runsDoneAtStop = messages.filter((m) => m === RUN_DONE).length;
    });
    // Ten intervals, and the pending promise callbacks of each: a stop() that did not wait for
    // the run would have resolved by now.
    await vi.advanceTimersByTimeAsync(50);
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    expect(runsDoneAtStop).toBe(1);
    // Ten intervals on, a run scheduled despite the stop would have checked a domain.
    await vi.advanceTimersByTimeAsync(50);
    expect(seen).toHaveLength(1);
  });

  it('reports how many domains lost verification and keeps going when one check throws', async () => {
    const bad = await verifiedDomain('bad.com');
    const lost = await verifiedDomain('lost.com');
    const recheck = new DomainRecheck({
      store,
      coordination: new LocalCoordination({ nodeId: 'test' }),
      logger,
      intervalMs: 60_000,
      domains: {
        verify: async (id) => {
          if (id === bad.id) throw new Error('boom');
          return { ...(await store.domains.get(id))!, verified: false };
        },
      },
    });
    expect(await recheck.runOnce()).toEqual({ checked: 1, lost: 1 });
    // The re-check only reports: recording a check's outcome is verify's job (faked here), so
    // the stored domain is as before.
    expect((await store.domains.get(lost.id))?.verified).toBe(true);
  });

  it('does not keep the process alive while waiting for the next run', async () => {
    const recheck = new DomainRecheck({ store, coordination: new LocalCoordination({ nodeId: 'test' }), logger, intervalMs: 60_000, domains: { verify: async () => undefined } });
    await recheck.start();
    const timer = (recheck as unknown as { timer: NodeJS.Timeout }).timer;
    expect(timer.hasRef()).toBe(false);
    await recheck.stop();
  });
});
