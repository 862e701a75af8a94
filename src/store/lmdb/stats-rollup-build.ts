/**
 * Once per data folder: the statistics rollup (stats-rollup.ts) of counters written before it
 * existed, made from the quarter-hour records (grains 'q' and 'h') and the day records ('d', which
 * also hold the counters older than the quarter hours), so every read answers as before the
 * upgrade. Run at start before anything writes (LmdbStore.upgradeData, from `postrider serve`),
 * in bounded transactions; an interrupted build starts over at the next start (the records of
 * the rollup are cleared first, the flag is set last). Until the flag is set reads go the old way.
 */
import type { MailType } from '../../domain/types.js';
import type { StatCounters } from '../../domain/stat-counters.js';
import { addCountersToVector, addVector, QUARTERS_IN, zeroVector, type RollupGrain, type RollupVector } from '../../domain/stat-levels.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { pageAfter, sameKeyParts } from './page-after.js';
import { ROLLUP_BUILT } from './stats-rollup.js';

const BATCH = 20_000;

type Untagged = [string, number, string, MailType];

/** Returns how many counter records were rolled up (0: built already); progress(n) after each batch. */
export async function buildRollup(store: Store, progress: (records: number) => void = () => {}): Promise<number> {
  if (dbsOf(store).meta.get(ROLLUP_BUILT) === true) return 0;
  while ((await store.write(() => clearSome(store))) > 0);
  let total = 0;
  for (const [source, grains] of [['statsQuarter', ['q', 'h']], ['statsDaily', ['d']]] as const) {
    let cursor: unknown[] | undefined;
    for (;;) {
      const page = await store.write(() => rollUpPage(store, source, grains, cursor));
      total += page.count;
      if (page.count > 0) progress(total);
      if (page.count < BATCH) break;
      cursor = page.last;
    }
  }
  await store.write(() => dbsOf(store).meta.put(ROLLUP_BUILT, true));
  return total;
}

function clearSome(store: Store): number {
  const keys = [...dbsOf(store).statsRollup.getKeys({ limit: BATCH })];
  for (const k of keys) dbsOf(store).statsRollup.remove(k);
  return keys.length;
}

function rollUpPage(store: Store, source: 'statsQuarter' | 'statsDaily', grains: readonly RollupGrain[], cursor: unknown[] | undefined): { count: number; last?: unknown[] } {
  const db = dbsOf(store)[source];
  const page = pageAfter(cursor, BATCH, (r) => db.getRange(r as never) as Iterable<{ key: unknown[]; value: unknown }>, (e) => e.key, sameKeyParts);
  const sums = new Map<string, { key: unknown[]; add: RollupVector }>();
  for (const { key, value } of page) {
    const [accountId, bucket, channelId, mailType] = key as Untagged;
    // The source grain: quarter hours for statsQuarter, days for statsDaily.
    const quarter = source === 'statsQuarter' ? bucket : bucket * QUARTERS_IN.d;
    for (const grain of grains) {
      const b = Math.floor(quarter / QUARTERS_IN[grain]);
      for (const channel of [channelId, '']) {
        const id = JSON.stringify([accountId, channel, grain, b]);
        let s = sums.get(id);
        if (!s) sums.set(id, (s = { key: [accountId, channel, grain, b], add: zeroVector() }));
        addCountersToVector(s.add, mailType, value as Partial<StatCounters>);
      }
    }
  }
  const rollup = dbsOf(store).statsRollup;
  for (const { key, add } of sums.values()) {
    const next = zeroVector();
    addVector(next, (rollup.get(key) as number[] | undefined) ?? next);
    addVector(next, add);
    rollup.put(key, next);
  }
  return { count: page.length, last: page[page.length - 1]?.key };
}
