/**
 * The broadcast expander over the coordination port (src/submission/broadcast-expander.ts): a
 * wake-up on 'broadcasts' starts an expansion, and a broadcast is expanded under its
 * 'broadcast-expansion' lease, so expanders sharing a coordination never expand one broadcast at
 * once. Real LMDB store, a LocalCoordination on a fake clock, no pool (the expander commits
 * requests; composing is the finishing stage's, stubbed out here).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalCoordination } from '../../src/coordination/local.js';
import { PublicUrl } from '../../src/domain/public-url.js';
import type { BroadcastCommon, BroadcastEntry } from '../../src/submission/broadcast.js';
import { IntakeTemplates } from '../../src/submission/template-check.js';
import { BroadcastExpander } from '../../src/submission/broadcast-expander.js';
import type { SubmissionDeps } from '../../src/submission/deps.js';
import { IdempotencyGate } from '../../src/submission/idempotency.js';
import type { DkimKeyRef } from '../../src/submission/ports.js';
import { deliveryConfig, openTestStore, silentLogger, type TestStore } from '../support/delivery.js';
import { FakeClock } from '../support/fake-clock.js';
import { waitFor } from '../support/wait.js';

let t: TestStore;
let clock: FakeClock;
let coordination: LocalCoordination;
const expanders: BroadcastExpander[] = [];

beforeEach(async () => {
  t = await openTestStore();
  await t.store.meta.ensureTrackingSecret();
  clock = new FakeClock();
  coordination = new LocalCoordination({ nodeId: 'node-1', clock });
});

afterEach(async () => {
  for (const e of expanders.splice(0)) await e.stop();
  await t.close();
});

const COMMON: BroadcastCommon = {
  from: { email: 'promo@sender.test' },
  replyTo: [],
  template: { subject: 'Hi {{name}}', text: 'Hello {{name}}' },
  attachments: [],
  tracking: { opens: false, links: false },
  deliveryType: 'live',
};

/** An accepted broadcast of n entries, as POST /send/broadcast stores it. */
async function acceptBroadcast(id: string, n: number): Promise<void> {
  const entries: BroadcastEntry[] = Array.from({ length: n }, (_, i) => ({
    to: [{ email: `r${i}@example.net` }],
    cc: [],
    bcc: [],
    tags: [],
    headers: {},
    metadata: {},
    data: { name: `n${i}` },
  }));
  await t.store.broadcasts.accept<BroadcastCommon, BroadcastEntry>({
    record: { id, accountId: 'acc-1', channelId: 'ch-1', createdAt: new Date().toISOString(), state: 'expanding', total: n, cursor: 0, messages: 0, skipped: 0, failed: 0, suppressed: 0, common: COMMON },
    entries,
  });
}

/** The expander's deps; signingKey is read once per prepared batch, so it says which expander prepares. */
function depsWith(signingKey: () => Promise<DkimKeyRef | undefined>): SubmissionDeps {
  const config = deliveryConfig();
  return {
    store: t.store,
    config,
    builder: { build: () => Promise.reject(new Error('not used')), finish: () => Promise.reject(new Error('not used')), checkTemplate: () => Promise.reject(new Error('not used')), parseContent: () => Promise.reject(new Error('not used')) },
    domains: { findSendingDomain: async () => undefined, signingKey },
    publicUrl: new PublicUrl({ configured: 'https://links.test', http: config.http, hostname: config.hostname, boundPort: () => 0 }),
    idempotency: new IdempotencyGate(t.store.idempotency),
    signing: { schedule: () => {} },
    templateCheck: new IntakeTemplates(() => Promise.reject(new Error('not used'))),
  };
}

function newExpander(signingKey: () => Promise<DkimKeyRef | undefined>, o: { leaseMs?: number } = {}): BroadcastExpander {
  const e = new BroadcastExpander(depsWith(signingKey), silentLogger(), { clock, coordination, ...o });
  expanders.push(e);
  return e;
}

/** A signingKey that holds its first call until released. */
function heldOnce() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const s = { calls: 0, release, signingKey: async () => (++s.calls === 1 ? gate.then(() => undefined) : undefined) };
  return s;
}

async function messagesOf(broadcastId: string): Promise<number> {
  return (await t.store.messages.all()).filter((m) => m.broadcastId === broadcastId).length;
}

describe('broadcast expansion over the coordination port', () => {
  it('starts an expansion on a wake-up on broadcasts', async () => {
    const e = newExpander(async () => undefined);
    await e.start();
    await e.drain(); // nothing to expand yet
    await acceptBroadcast('b-wake', 3);
    coordination.wake('broadcasts');
    await waitFor(async () => (await t.store.broadcasts.get('b-wake'))?.state === 'done', { what: 'the broadcast expanded after the wake-up' });
    expect(await messagesOf('b-wake')).toBe(3);
  });

  it('never has two expanders sharing a coordination expand one broadcast at once', async () => {
    await acceptBroadcast('b-shared', 150);
    const a = heldOnce();
    const first = newExpander(a.signingKey);
    await first.start();
    await waitFor(() => a.calls === 1, { what: 'the first expander preparing its first batch' });

    let secondCalls = 0;
    const second = newExpander(async () => (secondCalls++, undefined));
    await second.start();
    await second.drain(); // its round ends at the broadcast the first one holds
    expect(secondCalls).toBe(0);

    a.release();
    await first.drain();
    expect(secondCalls).toBe(0);
    expect(await t.store.broadcasts.get('b-shared')).toMatchObject({ state: 'done', cursor: 150, messages: 150 });
    expect(await messagesOf('b-shared')).toBe(150);
    // Released once done: anyone may own it again.
    expect(await coordination.own('broadcast-expansion', 'b-shared', 1_000)).not.toBeNull();
  });

  it('expands a broadcast another holder owns once that holder released it, at its look again', async () => {
    await acceptBroadcast('b-later', 2);
    const other = (await coordination.own('broadcast-expansion', 'b-later', 60_000))!;
    const e = newExpander(async () => undefined, { leaseMs: 60_000 });
    await e.start();
    await e.drain();
    expect(await messagesOf('b-later')).toBe(0);
    await other.release();
    clock.advance(60_000);
    await waitFor(async () => (await t.store.broadcasts.get('b-later'))?.state === 'done', { what: 'the broadcast expanded at the look again' });
    expect(await messagesOf('b-later')).toBe(2);
  });

  it('stops after the committed batch once its lease was taken over, and leaves the rest to the new holder', async () => {
    await acceptBroadcast('b-lost', 150);
    const a = heldOnce();
    const e = newExpander(a.signingKey, { leaseMs: 1_000 });
    await e.start();
    await waitFor(() => a.calls === 1, { what: 'the first batch being prepared' });
    clock.advance(1_001); // the lease lapsed while the batch was prepared (a stalled node)
    const taker = await coordination.own('broadcast-expansion', 'b-lost', 60_000);
    expect(taker).not.toBeNull();
    a.release();
    await e.drain();
    // The first batch was committed (its cursor checked); the renewal after it failed: nothing more.
    expect(await t.store.broadcasts.get('b-lost')).toMatchObject({ state: 'expanding', cursor: 100 });
    expect(await messagesOf('b-lost')).toBe(100);
  });

  it('gives the lease back when it stops in the middle of a broadcast', async () => {
    await acceptBroadcast('b-stop', 150);
    const a = heldOnce();
    const e = newExpander(a.signingKey);
    await e.start();
    await waitFor(() => a.calls === 1, { what: 'the first batch being prepared' });
    const stopped = e.stop();
    a.release();
    await stopped;
    expect(await coordination.own('broadcast-expansion', 'b-stop', 1_000)).not.toBeNull();
  });
});
