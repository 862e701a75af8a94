/** The finishing stage (src/submission/finishing.ts) on a real LMDB store, with a stand-in signer. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from 'pino';
import { AppError } from '../../src/domain/errors.js';
import type { DkimKeyRef, FinishRequest } from '../../src/submission/ports.js';
import { FinishingStage, type FinishingStageOptions } from '../../src/submission/finishing.js';
import { TaskError } from '../../src/workers/errors.js';
import { LocalCoordination } from '../../src/coordination/local.js';
import { FakeClock } from '../support/fake-clock.js';
import { dueJobIds, jobsOf, openTestStore, queueMessage, silentLogger, type TestStore } from '../support/delivery.js';
import { waitFor } from '../support/wait.js';

const KEY: DkimKeyRef = { domain: 'sender.test', selector: 's1', algorithm: 'ed25519', privateKeyPem: 'not used by the stand-in' };

let t: TestStore;
let stage: FinishingStage | undefined;

beforeEach(async () => {
  t = await openTestStore();
});

afterEach(async () => {
  await stage?.stop();
  stage = undefined;
  await t.close();
});

/** A signer that prepends a recognizable field, as the real one prepends DKIM-Signature. */
const fakeSign = async ({ raw, dkim }: { raw: Uint8Array; dkim: DkimKeyRef }) => Buffer.concat([Buffer.from(`DKIM-Signature: s=${dkim.selector}\r\n`), raw]);

/** The pool's finish task with a stand-in signer: these messages were committed raw (nothing to compose). */
const finishWith = (sign: typeof fakeSign) => (inputs: FinishRequest[]) =>
  Promise.allSettled(inputs.map(async (i) => ({ raw: i.dkim ? await sign({ raw: i.raw!, dkim: i.dkim }) : i.raw! })));

type Sizes = Pick<FinishingStageOptions, 'batch' | 'concurrency' | 'maxWaiting' | 'pageSize' | 'confirmMs' | 'retryMs'>;
/** The backlog's lease: whose coordination, how long, on which clock. */
type LeaseOptions = Pick<FinishingStageOptions, 'coordination' | 'leaseMs' | 'clock'>;

function newStage(o: { sign?: typeof fakeSign; key?: DkimKeyRef; onReady?: () => void; logger?: Logger; sizes?: Sizes; lease?: LeaseOptions } = {}): FinishingStage {
  stage = new FinishingStage({
    store: t.store,
    builder: { finish: finishWith(o.sign ?? fakeSign) },
    domains: { signingKey: async () => ('key' in o ? o.key : KEY) },
    logger: o.logger ?? silentLogger(),
    onReady: o.onReady,
    retryMs: 10,
    confirmMs: 10,
    ...o.sizes,
    ...o.lease,
  });
  return stage;
}

const signed = (id: string) => waitFor(async () => !(await t.store.messages.isUnfinished(id)), { what: `message ${id} signed` });

describe('FinishingStage', () => {
  it('keeps the jobs of a message committed unsigned out of the due queue until its signed body is stored', async () => {
    const onReady = vi.fn();
    const s = newStage({ onReady });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test', 'b@two.test'], signingDomain: 'sender.test' });
    expect((await t.store.messages.isUnfinished(id))).toBe(true);
    expect(await dueJobIds(t.store)).toEqual([]);

    s.schedule([id]);
    await signed(id);
    expect((await t.store.messages.body(id))!.toString()).toMatch(/^DKIM-Signature: s=s1\r\nFrom: /);
    expect((await dueJobIds(t.store)).sort()).toEqual((await jobsOf(t.store, id)).map((j) => j.id).sort());
    // onReady runs in the stage's continuation after the write resolves, which may come a turn
    // after the committed state that signed() saw.
    await waitFor(() => onReady.mock.calls.length > 0, { what: 'onReady called' });
  });

  it('signs at start what the last run committed and left unsigned', async () => {
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    await newStage().start();
    await signed(id);
    expect(await dueJobIds(t.store)).toEqual((await jobsOf(t.store, id)).map((j) => j.id));
  });

  it('leaves a message whose signature failed waiting, and tries it again', async () => {
    let calls = 0;
    const flaky = async (input: Parameters<typeof fakeSign>[0]) => {
      if (++calls === 1) throw new Error('worker crashed');
      return fakeSign(input);
    };
    const s = newStage({ sign: flaky });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    s.schedule([id]);
    await signed(id);
    expect(calls).toBe(2);
    expect((await t.store.messages.body(id))!.toString()).toMatch(/^DKIM-Signature: /);
  });

  it('sends a message unsigned when its domain has no key any more', async () => {
    const s = newStage({ key: undefined });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    s.schedule([id]);
    await signed(id);
    expect((await t.store.messages.body(id))!.toString()).toMatch(/^From: /);
    expect(await dueJobIds(t.store)).toHaveLength(1);
  });

  it('signs each message once when it is scheduled again while being signed', async () => {
    const sign = vi.fn(fakeSign);
    const s = newStage({ sign });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    s.schedule([id]);
    s.schedule([id]);
    await signed(id);
    await waitFor(async () => (await s.backlog()) === 0, { what: 'an idle stage' });
    expect(sign).toHaveBeenCalledTimes(1);
    expect((await t.store.messages.body(id))!.toString().match(/DKIM-Signature/g)).toHaveLength(1);
  });

  it('ends a message whose input fails the same way three times: bounced per recipient with the reason, jobs done, nothing suppressed', async () => {
    let calls = 0;
    const bad = async () => {
      calls++;
      // What the pool gives back for a template that cannot render with this data (workers/errors.ts).
      throw TaskError.fromData({ code: 'templating_error', message: 'The html template could not be rendered: boom', field: 'html' });
    };
    const s = newStage({ sign: bad });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test', 'b@two.test'], signingDomain: 'sender.test' });
    s.schedule([id]);
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the message ended' });
    expect(calls).toBe(3);
    expect((await t.store.messages.isUnfinished(id))).toBe(false);
    expect((await t.store.messages.body(id))!.toString()).toMatch(/^From: /); // the committed body, never signed
    expect((await jobsOf(t.store, id)).map((j) => j.state)).toEqual(['done', 'done']);
    expect(await dueJobIds(t.store)).toEqual([]);
    const bounced = (await t.store.events.ofMessage(id)).filter((e) => e.eventType === 'bounced');
    expect(bounced.map((e) => e.recipients[0]).sort()).toEqual(['a@one.test', 'b@two.test']);
    for (const e of bounced) {
      expect(e.details).toMatchObject({ bounceType: 'hard', category: 'other', enhancedCode: '5.6.0', reason: 'The message could not be composed: The html template could not be rendered: boom' });
    }
    expect((await t.store.suppressions.get('ch-1', 'transactional', 'a@one.test'))).toBeUndefined();
  });

  it('ends a message whose input fails on every try though the stage restarts between its tries: the count is kept in its entry', async () => {
    let calls = 0;
    const bad = async () => {
      calls++;
      throw TaskError.fromData({ code: 'templating_error', message: 'The html template could not be rendered: boom', field: 'html' });
    };
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    const kept = async () => (await t.store.messages.unfinished(id))?.failures;
    // A minute between tries: only the restarts, each trying again at once, make the tries.
    for (let run = 1; run <= 2; run++) {
      await newStage({ sign: bad, sizes: { confirmMs: 60_000 } }).start();
      await waitFor(async () => (await kept())?.same === run, { what: `try ${run} kept in the entry` });
      await stage!.stop();
    }
    expect(await kept()).toEqual({ tries: 2, same: 2, last: 'The html template could not be rendered: boom', code: 'templating_error' });
    await newStage({ sign: bad, sizes: { confirmMs: 60_000 } }).start();
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the message ended' });
    expect(calls).toBe(3);
    expect((await t.store.messages.isUnfinished(id))).toBe(false);
    expect((await t.store.events.ofMessage(id)).filter((e) => e.eventType === 'bounced')).toHaveLength(1);
  });

  it('reads an entry without a kept count (written before it was kept) as no failure yet', async () => {
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    expect((await t.store.messages.unfinished(id))?.failures).toBeUndefined();
    const s = newStage({ sign: async () => { throw new TaskError('internal_error', 'Worker failed: terminated'); }, sizes: { retryMs: 60_000 } });
    await s.start();
    await waitFor(async () => (await t.store.messages.unfinished(id))?.failures !== undefined, { what: 'the first failure kept' });
    expect((await t.store.messages.unfinished(id))?.failures).toEqual({ tries: 1, same: 0, code: 'internal_error' });
  });

  it('finishes a message whose input failure did not come back (a thread that failed once), and does not end it', async () => {
    let calls = 0;
    const once = async (input: Parameters<typeof fakeSign>[0]) => {
      if (++calls <= 2) throw TaskError.fromData({ code: 'templating_error', message: 'flaky' });
      return fakeSign(input);
    };
    const s = newStage({ sign: once });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    s.schedule([id]);
    await signed(id);
    expect((await t.store.events.ofMessage(id)).some((e) => e.eventType === 'bounced')).toBe(false);
    expect(await dueJobIds(t.store)).toHaveLength(1);
  });

  it('keeps retrying an unknown failure, logging it once per message, never ending the message', async () => {
    const error = vi.fn();
    const logger = { info: vi.fn(), warn: vi.fn(), error, debug: vi.fn(), child: () => logger } as unknown as Logger;
    let calls = 0;
    const dead = async () => {
      calls++;
      // What the pool gives for a thread that died: no field, not an input error.
      throw new TaskError('internal_error', 'Worker failed: terminated');
    };
    const s = newStage({ sign: dead, logger });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    s.schedule([id]);
    await waitFor(() => calls >= 4, { what: 'four tries' });
    expect(error).toHaveBeenCalledTimes(1);
    expect((await t.store.messages.isUnfinished(id))).toBe(true);
    expect((await t.store.events.ofMessage(id)).some((e) => e.eventType === 'bounced')).toBe(false);
  });

  it('retries a full store with its own backoff until space returns, and never ends the message for it', async () => {
    let calls = 0;
    const full = async (input: Parameters<typeof fakeSign>[0]) => {
      // More failures than the tries that end a message whose input fails.
      if (++calls <= 4) throw new AppError('storage_full', 'The store is full');
      return fakeSign(input);
    };
    const s = newStage({ sign: full });
    await s.start();
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    s.schedule([id]);
    await signed(id);
    expect(calls).toBe(5);
    expect((await t.store.events.ofMessage(id)).some((e) => e.eventType === 'bounced')).toBe(false);
    expect(await dueJobIds(t.store)).toHaveLength(1);
  });

  it('waits out a store that cannot be reached: one warning for all its messages, no count of tries written, none ended', async () => {
    const warn = vi.fn();
    const error = vi.fn();
    const logger = { info: vi.fn(), warn, error, debug: vi.fn(), child: () => logger } as unknown as Logger;
    const kept = vi.spyOn(t.store.messages, 'recordFinishingTries');
    let calls = 0;
    const unreachable = async (input: Parameters<typeof fakeSign>[0]) => {
      // Every message fails more often than the tries that end a message whose input fails (3).
      if (++calls <= 5 * 4) throw new AppError('store_unavailable', 'The store cannot be reached');
      return fakeSign(input);
    };
    const s = newStage({ sign: unreachable, logger });
    await s.start();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await queueMessage(t.store, { to: [`r${i}@one.test`], signingDomain: 'sender.test' }));
    s.schedule(ids);
    for (const id of ids) await signed(id);
    expect(calls).toBeGreaterThan(20);
    expect(kept).not.toHaveBeenCalled();
    expect(error).not.toHaveBeenCalled();
    const lines = warn.mock.calls.filter(([, msg]) => typeof msg === 'string' && msg.startsWith('the store cannot be reached'));
    expect(lines).toHaveLength(1);
    for (const id of ids) expect((await t.store.events.ofMessage(id)).some((e) => e.eventType === 'bounced')).toBe(false);
    expect(await dueJobIds(t.store)).toHaveLength(5);
  });

  it('walks a backlog left in the store a page at a time, holding at most a page of it in memory', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) ids.push(await queueMessage(t.store, { to: [`r${i}@one.test`], signingDomain: 'sender.test' }));
    let held = 0;
    const sign = async (input: Parameters<typeof fakeSign>[0]) => {
      held = Math.max(held, s.held);
      return fakeSign(input);
    };
    const s = newStage({ sign, sizes: { batch: 2, concurrency: 1, pageSize: 3 } });
    await s.start();
    for (const id of ids) await signed(id);
    expect((await t.store.messages.unfinishedCount())).toBe(0);
    // A page (3) plus the task's batch (2) at most, never the 9.
    expect(held).toBeLessThanOrEqual(5);
  });

  it('leaves what overflows the scheduled lane to the store and still finishes every message', async () => {
    const s = newStage({ sizes: { batch: 2, concurrency: 1, maxWaiting: 2, pageSize: 2 } });
    await s.start();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await queueMessage(t.store, { to: [`r${i}@one.test`], signingDomain: 'sender.test' }));
    s.schedule(ids);
    for (const id of ids) await signed(id);
    expect(await dueJobIds(t.store)).toHaveLength(7);
  });

  it('finishes a scheduled message before the store backlog that waited before it', async () => {
    const backlog: string[] = [];
    for (let i = 0; i < 4; i++) backlog.push(await queueMessage(t.store, { to: [`old${i}@one.test`], signingDomain: 'sender.test' }));
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const sign = async (input: Parameters<typeof fakeSign>[0]) => {
      const to = /^To: (.*)$/m.exec(Buffer.from(input.raw).toString())![1]!;
      order.push(to.trim());
      if (order.length === 1) await gate; // the first backlog message holds the only task
      return fakeSign(input);
    };
    const s = newStage({ sign, sizes: { batch: 1, concurrency: 1, pageSize: 2 } });
    await s.start();
    await waitFor(() => order.length === 1, { what: 'the first task started' });
    const fresh = await queueMessage(t.store, { to: ['new@two.test'], signingDomain: 'sender.test' });
    s.schedule([fresh]);
    release();
    for (const id of [...backlog, fresh]) await signed(id);
    expect(order[1]).toBe('new@two.test');
  });
});

describe('FinishingStage lanes', () => {
  it('finishes a send scheduled after a broadcast\'s messages (background) before them', async () => {
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const sign = async (input: Parameters<typeof fakeSign>[0]) => {
      order.push(/^To: (.*)$/m.exec(Buffer.from(input.raw).toString())![1]!.trim());
      if (order.length === 1) await gate; // the first holds the only task
      return fakeSign(input);
    };
    const s = newStage({ sign, sizes: { batch: 1, concurrency: 1 } });
    await s.start();
    const first = await queueMessage(t.store, { to: ['first@one.test'], signingDomain: 'sender.test' });
    s.schedule([first]);
    await waitFor(() => order.length === 1, { what: 'the first task started' });
    const broadcast: string[] = [];
    for (let i = 0; i < 3; i++) broadcast.push(await queueMessage(t.store, { to: [`b${i}@one.test`], mailType: 'broadcast', signingDomain: 'sender.test' }));
    s.schedule(broadcast, { background: true });
    const send = await queueMessage(t.store, { to: ['send@two.test'], signingDomain: 'sender.test' });
    s.schedule([send]);
    expect(s.held).toBe(2); // the running one and the send: the broadcast's stay in the store
    expect(await s.backlog()).toBe(5);
    release();
    for (const id of [first, ...broadcast, send]) await signed(id);
    expect(order[1]).toBe('send@two.test');
  });
});

describe("FinishingStage and its node's 'finishing' lease", () => {
  const NODE = 'node-1';
  let clock: FakeClock;
  let coordination: LocalCoordination;

  beforeEach(() => {
    clock = new FakeClock();
    coordination = new LocalCoordination({ nodeId: NODE, clock });
  });

  const leased = { leaseMs: 30_000 };

  /** Moves the clock on by one turn of the lease's timer (a third of it), and waits until the stage planned the next. */
  async function turn(): Promise<void> {
    clock.advance(10_000);
    await waitFor(() => clock.nextTimerAt() !== undefined, { what: 'the next turn of the lease planned' });
  }

  it("does not walk its node's backlog while another holder owns 'finishing' for the node, and walks it once that holder released it", async () => {
    const other = (await coordination.own('finishing', NODE, 60_000))!;
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    const sign = vi.fn(fakeSign);
    const s = newStage({ sign, lease: { coordination, clock, ...leased } });
    await s.start();
    // Nothing was read from the backlog: no walk started, so nothing is in flight either.
    expect(s.held).toBe(0);
    expect(sign).not.toHaveBeenCalled();
    expect(await t.store.messages.isUnfinished(id)).toBe(true);

    await other.release();
    await turn(); // the stage asks again every third of its lease
    await signed(id);
    expect(sign).toHaveBeenCalledTimes(1);
  });

  it("takes its node's backlog over once the other holder's lease lapsed", async () => {
    await coordination.own('finishing', NODE, 20_000); // a holder that stopped without releasing
    const id = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    const s = newStage({ lease: { coordination, clock, ...leased } });
    await s.start();
    await turn();
    expect(await t.store.messages.isUnfinished(id)).toBe(true); // still the other's
    await turn();
    await signed(id);
  });

  it('finishes a send scheduled as it is committed even while the backlog is owned elsewhere, and leaves a broadcast\'s to the store', async () => {
    await coordination.own('finishing', NODE, 60_000);
    const s = newStage({ lease: { coordination, clock, ...leased } });
    await s.start();
    const send = await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test' });
    const broadcast = await queueMessage(t.store, { to: ['b@one.test'], mailType: 'broadcast', signingDomain: 'sender.test' });
    s.schedule([broadcast], { background: true });
    s.schedule([send]);
    await signed(send);
    await waitFor(() => s.held === 0, { what: 'the send\'s task over' });
    // Never read: the walk that would find it waits for the lease.
    expect(await t.store.messages.isUnfinished(broadcast)).toBe(true);
    expect(await t.store.messages.unfinishedCount()).toBe(1);
  });

  it('holds the lease while it runs, renewed past its ttl, and gives it back when it stops', async () => {
    const s = newStage({ lease: { coordination, clock, ...leased } });
    await s.start();
    expect(await coordination.own('finishing', NODE, 1_000)).toBeNull();
    for (let i = 0; i < 9; i++) await turn(); // three leases long: only the renewals keep it
    expect(await coordination.own('finishing', NODE, 1_000)).toBeNull();
    await s.stop();
    stage = undefined;
    expect(await coordination.own('finishing', NODE, 1_000)).not.toBeNull();
  });
});

describe('oldestUnfinishedMs', () => {
  it('is how long the oldest message waiting to be finished has waited since its commit, 0 once none waits', async () => {
    const now = Date.parse('2026-03-01T12:00:00Z');
    expect(await t.store.messages.oldestUnfinishedMs(now)).toBe(0);
    const ids: string[] = [];
    for (const ago of [5_000, 90_000, 30_000]) {
      ids.push(await queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test', now: new Date(now - ago) }));
    }
    expect(await t.store.messages.oldestUnfinishedMs(now)).toBe(90_000);
    // The oldest finished: the next oldest is said.
    await t.store.messages.storeFinished([{ messageId: ids[1]!, body: Buffer.from('From: a@sender.test\r\n\r\nx') }]);
    expect(await t.store.messages.oldestUnfinishedMs(now)).toBe(30_000);
    const s = newStage();
    await s.start();
    for (const id of ids) await signed(id);
    expect(await t.store.messages.oldestUnfinishedMs(now)).toBe(0);
  });
});

describe('unfinishedAfter', () => {
  it('pages through the waiting entries in key order, each once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await queueMessage(t.store, { to: [`r${i}@one.test`], signingDomain: 'sender.test' }));
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await t.store.messages.unfinishedAfter(after, 2);
      if (page.length === 0) break;
      expect(page.length).toBeLessThanOrEqual(2);
      seen.push(...page);
      after = page[page.length - 1];
    }
    expect(seen).toEqual([...ids].sort());
  });
});
