/**
 * An LMDB data folder written before the statistics rollup (issue 36) reads the same after the
 * upgrade: before the data upgrade the reads take the day and quarter-hour records, the upgrade
 * rolls them up once (and says how many, with progress), after it the rollup answers the same,
 * new events add to it, and a build interrupted before its mark starts over without counting
 * anything twice.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ZoneCalendar } from '../../src/domain/time-zone.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import type { StatTotals } from '../../src/store/port/events.js';
import { seedEvents } from '../support/engine-fixtures.js';
import { eventDrafts } from '../support/events.js';
import { dropStatsRollup } from '../support/lmdb-older-store.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-04-01T00:00:00Z');
const ACCOUNT = 'acct-upgrade';
const CHANNELS = ['ch-a', 'ch-b'];

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function views(store: LmdbStore): Promise<Record<string, StatTotals | StatTotals[]>> {
  const kolkata = ZoneCalendar.of('Asia/Kolkata')!.dayEdges(T0, T0 + 6 * DAY);
  const hours = Array.from({ length: 73 }, (_, i) => T0 + DAY + i * HOUR);
  return {
    kolkataDays: await store.stats.daySeries({ accountId: ACCOUNT, edgesMs: kolkata }),
    utcDays: await store.stats.daySeries({ accountId: ACCOUNT, channelIds: [CHANNELS[1]], edgesMs: ZoneCalendar.of('UTC')!.dayEdges(T0, T0 + 6 * DAY) }),
    hours: await store.stats.series({ accountId: ACCOUNT, edgesMs: hours }),
    totals: await store.stats.totals({ accountId: ACCOUNT, fromDay: 0, toDay: Number.MAX_SAFE_INTEGER }),
  };
}

const drafts = (seed: number) => eventDrafts({ accountId: ACCOUNT, channelIds: CHANNELS, count: 600, startMs: T0 + HOUR, endMs: T0 + 6 * DAY, seed, lateShare: 0.1, messages: 60 });

describe('the statistics rollup of an older LMDB data folder', () => {
  it.each([
    ['never built', {}],
    ['interrupted before its mark', { keepRecords: true }],
  ])('reads the same before and after the data upgrade (%s), and new events add to it', async (_name, older) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-rollup-'));
    dirs.push(dataDir);
    let store = new LmdbStore({ dataDir });
    await store.start();
    await seedEvents(store, drafts(71), { batch: 100 });
    const written = await views(store);
    await store.stop();

    await dropStatsRollup(dataDir, older);
    store = new LmdbStore({ dataDir });
    await store.start();
    try {
      expect(await views(store)).toEqual(written);
      const progress: number[] = [];
      const { statsRolledUp } = await store.upgradeData({ statsRolledUp: (n) => progress.push(n) });
      expect(statsRolledUp).toBeGreaterThan(0);
      expect(progress.at(-1)).toBe(statsRolledUp);
      expect(await views(store)).toEqual(written);
      expect((await store.upgradeData()).statsRolledUp).toBe(0);

      // New events count in the rollup as in the records it is made of: without it again, the old reads answer the same.
      await seedEvents(store, drafts(72), { batch: 100 });
      const both = await views(store);
      expect(both).not.toEqual(written);
      await store.stop();
      await dropStatsRollup(dataDir);
      store = new LmdbStore({ dataDir });
      await store.start();
      expect(await views(store)).toEqual(both);
    } finally {
      await store.stop();
    }
  });
});
