/**
 * The LMDB engine's page budget (store/lmdb/activity-query.ts findEvents): an engine test, on
 * the engine's own function with a tiny budget. A page that runs out of budget stops where it
 * stopped (`partial`, `after` past what it looked at), so continuing loses nothing, in both
 * orders. The port says only that a partial page may follow (store/port/events.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/domain/types.js';
import { findEvents } from '../../src/store/lmdb/activity-query.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import { bruteForceEvents, generateEvents } from '../support/events.js';

const DAY = 86_400_000;
const ACCOUNT = randomUUID();
let dir: string;
let store: LmdbStore;
let all: EventRecord[];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-activity-budget-'));
  store = new LmdbStore({ dataDir: dir });
  await store.start();
  const now = Date.now();
  all = await generateEvents(store, { accountId: ACCOUNT, channelIds: [randomUUID(), randomUUID()], count: 1000, startMs: now - 5 * DAY, endMs: now, seed: 7 });
  // Another account's events in between: the walk skips them too.
  await generateEvents(store, { accountId: randomUUID(), channelIds: [randomUUID()], count: 200, startMs: now - 5 * DAY, endMs: now, seed: 8 });
});

afterAll(async () => {
  await store?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Pages of 50 under a budget of 300 units, following `after`; the seqs and how many pages were partial. */
function walk(order: 'asc' | 'desc'): { seqs: number[]; partials: number } {
  const f = { accountId: ACCOUNT, subject: 'password' };
  const seqs: number[] = [];
  let after = 0;
  let partials = 0;
  for (let i = 0; i < 10_000; i++) {
    const page = findEvents(store, f, { afterSeq: after, limit: 50, budget: 300, order });
    seqs.push(...page.results.map((e) => e.seq));
    if (page.partial) partials++;
    if (!page.partial && page.results.length < 50) break;
    if (order === 'asc') expect(page.after).toBeGreaterThan(after);
    else if (after > 0) expect(page.after).toBeLessThan(after);
    after = page.after;
  }
  return { seqs, partials };
}

describe('scan budget (LMDB engine)', () => {
  it('stops a page whose budget runs out where it stopped, so continuing loses nothing', () => {
    const expected = bruteForceEvents(all, ACCOUNT, { subject: 'password' }).map((e) => e.seq);
    const { seqs, partials } = walk('asc');
    expect(partials).toBeGreaterThan(0);
    expect(seqs).toEqual(expected);
  });

  it('stops a newest-first page the same way, continuing below where it stopped', () => {
    const expected = bruteForceEvents(all, ACCOUNT, { subject: 'password' }).map((e) => e.seq).reverse();
    const { seqs, partials } = walk('desc');
    expect(partials).toBeGreaterThan(0);
    expect(seqs).toEqual(expected);
  });
});
