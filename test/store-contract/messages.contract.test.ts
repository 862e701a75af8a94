/**
 * MessagesPort (store/port/messages.ts): the submission commit (messages, bodies, the send quota,
 * the idempotency record, a broadcast's progress: all or nothing), the reads, client Message-ID
 * lookups, and the finishing stage's verbs. The atomic rules are raced: the quota never lets more
 * recipients through than its limit, a key's record is written once, a broadcast's batch moves
 * the cursor once, a message is finished or ended once.
 */
import { expect, it } from 'vitest';
import { isAppError } from '../../src/domain/errors.js';
import { BroadcastCanceled } from '../../src/store/port/broadcasts.js';
import { ACCOUNT, accepted, broadcast, entries, idempotencyRecord, outcomes } from './submissions.js';
import { eachEngine } from './engines.js';

const codeOf = (err: unknown): string | undefined => (isAppError(err) ? err.code : undefined);
const FAILURE = { reason: 'the template does not render', category: 'other', enhancedCode: '5.6.0' } as const;

eachEngine('messages', (ctx) => {
  it('commits a message with its body, reads it back, and knows nothing of other ids', async () => {
    const m = accepted({ to: ['ann@example.org', 'bob@example.net'] });
    await ctx.store.messages.commit({ messages: [m] });
    const r = await ctx.store.messages.get(m.record.id);
    expect(r).toMatchObject({ ...m.record, status: 'queued', openJobs: 2 });
    expect(Buffer.from((await ctx.store.messages.body(m.record.id))!)).toEqual(Buffer.from(m.body!));
    expect(await ctx.store.messages.get('no-such-id')).toBeUndefined();
    expect(await ctx.store.messages.body('no-such-id')).toBeUndefined();
    expect(await ctx.store.messages.count()).toBe(1);
    expect((await ctx.store.messages.all()).map((x) => x.id)).toEqual([m.record.id]);
  });

  it('keeps the stored template and version a message was sent with (issue 34), through its finishing', async () => {
    const origin = { id: '7d0c5a1e-2b3f-4c5d-8e9f-0a1b2c3d4e5f', alias: 'welcome', version: 3 };
    const m = accepted({ compose: { template: { subject: 'Hi {{n}}', text: 'v3', data: { n: 1 } } }, template: origin });
    const plain = accepted();
    await ctx.store.messages.commit({ messages: [m, plain] });
    expect((await ctx.store.messages.get(m.record.id))?.template).toEqual(origin);
    expect((await ctx.store.messages.get(plain.record.id))?.template).toBeUndefined();
    const body = new Uint8Array(Buffer.from('Subject: Hi 1\r\n\r\nv3\r\n'));
    expect(await ctx.store.messages.storeFinished([{ messageId: m.record.id, body, composed: true, record: { text: 'v3', size: body.length } }])).toBe(1);
    expect(await ctx.store.messages.get(m.record.id)).toMatchObject({ template: origin, text: 'v3' });
  });

  it('reads a record with its body in one verb, and nothing for an unknown id or a message without a body yet', async () => {
    const m = accepted();
    const waiting = accepted({ compose: { template: 'request' } });
    await ctx.store.messages.commit({ messages: [m, waiting] });
    const both = await ctx.store.messages.withBody(m.record.id);
    expect(both?.message).toEqual(await ctx.store.messages.get(m.record.id));
    expect(Buffer.from(both!.body)).toEqual(Buffer.from(m.body!));
    expect(await ctx.store.messages.withBody(waiting.record.id)).toBeUndefined();
    expect(await ctx.store.messages.withBody('no-such-id')).toBeUndefined();
  });

  it('reads a body over 16 MiB back as a Buffer, in body() and withBody() (a 25 MB attachment submitted over SMTP)', async () => {
    const m = accepted();
    const body = Buffer.alloc(17 * 1024 * 1024, 'x');
    body.write('Subject: big\r\n\r\n');
    await ctx.store.messages.commit({ messages: [{ ...m, body }] });
    const read = (await ctx.store.messages.body(m.record.id))!;
    const both = (await ctx.store.messages.withBody(m.record.id))!;
    expect([Buffer.isBuffer(read), Buffer.isBuffer(both.body)]).toEqual([true, true]);
    expect(read.equals(body) && both.body.equals(body)).toBe(true);
    expect(read.indexOf('\r\n\r\n')).toBe(12);
  });

  it('keeps a large message to sign (over a MiB) whole from its commit through unfinished() to its signed body', async () => {
    const m = accepted({ sign: 'sender.test' });
    const body = Buffer.alloc(3 * 1024 * 1024 + 11);
    for (let i = 0; i < body.length; i++) body[i] = (i * 13) & 0xff;
    await ctx.store.messages.commit({ messages: [{ ...m, body }] });
    const u = (await ctx.store.messages.unfinished(m.record.id))!;
    expect(u.gone).toBe(false);
    expect(Buffer.from(u.body!).equals(body)).toBe(true);
    const signed = Buffer.concat([Buffer.from('DKIM-Signature: x\r\n'), body]);
    expect(await ctx.store.messages.storeFinished([{ messageId: m.record.id, body: signed }])).toBe(1);
    expect((await ctx.store.messages.body(m.record.id))!.equals(signed)).toBe(true);
    expect((await ctx.store.messages.withBody(m.record.id))!.body.equals(signed)).toBe(true);
  });

  it('commits a sandbox message as sent at once, and an empty commit as nothing', async () => {
    const m = accepted({ sandbox: true });
    await ctx.store.messages.commit({ messages: [m] });
    await ctx.store.messages.commit({ messages: [] });
    expect(await ctx.store.messages.get(m.record.id)).toMatchObject({ status: 'sent', openJobs: 0 });
    expect(await ctx.store.messages.count()).toBe(1);
  });

  it('keeps what it committed across a restart', async () => {
    const m = accepted();
    await ctx.store.messages.commit({ messages: [m] });
    const store = await ctx.reopen();
    expect((await store.messages.get(m.record.id))?.id).toBe(m.record.id);
  });

  it("finds an account's messages by the client's Message-ID, with or without brackets, and no other account's", async () => {
    const m = accepted({ messageIdHeader: '<client-1@app.example>' });
    const other = accepted({ accountId: 'acc-other', messageIdHeader: '<client-1@app.example>' });
    await ctx.store.messages.commit({ messages: [m, other] });
    expect(await ctx.store.messages.byClientMessageId(ACCOUNT, '<client-1@app.example>')).toEqual([m.record.id]);
    expect(await ctx.store.messages.byClientMessageId(ACCOUNT, 'client-1@app.example')).toEqual([m.record.id]);
    expect(await ctx.store.messages.byClientMessageId(ACCOUNT, '<unknown@app.example>')).toEqual([]);
  });

  it('takes the send quota in the commit and refuses, writing nothing, a commit that would pass it', async () => {
    const sendLimit = { accountId: ACCOUNT, limit: 3 };
    await ctx.store.messages.commit({ messages: [accepted({ to: ['a@example.org', 'b@example.org'] })], sendLimit });
    const over = accepted({ to: ['c@example.org', 'd@example.org'] });
    await expect(ctx.store.messages.commit({ messages: [over], sendLimit })).rejects.toMatchObject({ code: 'send_limit_exceeded' });
    expect(await ctx.store.messages.get(over.record.id)).toBeUndefined();
    await ctx.store.messages.commit({ messages: [accepted({ to: ['c@example.org'] })], sendLimit });
    expect(await ctx.store.messages.count()).toBe(2);
  });

  it('never lets racing commits pass the send quota: exactly the limit gets through', async () => {
    const sendLimit = { accountId: ACCOUNT, limit: 3 };
    const settled = await Promise.allSettled(Array.from({ length: 8 }, () => ctx.store.messages.commit({ messages: [accepted()], sendLimit })));
    const { fulfilled, reasons } = outcomes(settled);
    expect(fulfilled).toBe(3);
    expect(reasons.map(codeOf)).toEqual(Array(5).fill('send_limit_exceeded'));
    expect(await ctx.store.messages.count()).toBe(3);
  });

  it('stores the idempotency record with the messages, once: a second commit with a live key is refused and writes nothing', async () => {
    const nowMs = Date.now();
    const idempotency = { accountId: ACCOUNT, key: 'k1', record: idempotencyRecord(nowMs) };
    await ctx.store.messages.commit({ messages: [accepted()], idempotency });
    expect(await ctx.store.idempotency.get({ accountId: ACCOUNT, key: 'k1', nowMs })).toEqual(idempotency.record);
    const again = accepted();
    await expect(ctx.store.messages.commit({ messages: [again], idempotency })).rejects.toMatchObject({ code: 'conflict' });
    expect(await ctx.store.messages.get(again.record.id)).toBeUndefined();
  });

  it('lets exactly one of racing commits store a key', async () => {
    const idempotency = { accountId: ACCOUNT, key: 'race', record: idempotencyRecord(Date.now()) };
    const settled = await Promise.allSettled(Array.from({ length: 5 }, () => ctx.store.messages.commit({ messages: [accepted()], idempotency })));
    const { fulfilled, reasons } = outcomes(settled);
    expect(fulfilled).toBe(1);
    expect(reasons.map(codeOf)).toEqual(Array(4).fill('conflict'));
    expect(await ctx.store.messages.count()).toBe(1);
  });

  it("moves a broadcast's cursor with its batch, and refuses a batch that does not start at the cursor", async () => {
    const b = broadcast({ total: 4 });
    await ctx.store.broadcasts.accept({ record: b, entries: entries(4) });
    const progress = (from: number, cursor: number) => ({ broadcastId: b.id, from, cursor, skipped: 0, failures: [], suppressed: [] });
    const first = [accepted({ broadcastId: b.id }), accepted({ broadcastId: b.id })];
    await ctx.store.messages.commit({ messages: first, broadcastProgress: progress(0, 2) });
    expect(await ctx.store.broadcasts.get(b.id)).toMatchObject({ cursor: 2, messages: 2, state: 'expanding' });
    const stale = accepted({ broadcastId: b.id });
    await expect(ctx.store.messages.commit({ messages: [stale], broadcastProgress: progress(0, 2) })).rejects.toThrow(/cursor is at 2/);
    expect(await ctx.store.messages.get(stale.record.id)).toBeUndefined();
    await ctx.store.messages.commit({ messages: [accepted({ broadcastId: b.id })], broadcastProgress: { ...progress(2, 4), skipped: 1, failures: [{ index: 3, to: [], cc: [], bcc: [], code: 'recipients_suppressed', message: 'suppressed' }], suppressed: ['r3@example.org'] } });
    expect(await ctx.store.broadcasts.get(b.id)).toMatchObject({ cursor: 4, messages: 3, skipped: 1, suppressed: 1, state: 'done' });
    expect(await ctx.store.broadcasts.nextActive()).toBeUndefined();
  });

  it('moves the cursor once when two batches from the same entry race', async () => {
    const b = broadcast({ total: 2 });
    await ctx.store.broadcasts.accept({ record: b, entries: entries(2) });
    const batch = () => ctx.store.messages.commit({ messages: [accepted({ broadcastId: b.id })], broadcastProgress: { broadcastId: b.id, from: 0, cursor: 1, skipped: 0, failures: [], suppressed: [] } });
    const { fulfilled, reasons } = outcomes(await Promise.allSettled([batch(), batch(), batch()]));
    expect(fulfilled).toBe(1);
    expect(reasons).toHaveLength(2);
    expect(await ctx.store.broadcasts.get(b.id)).toMatchObject({ cursor: 1, messages: 1 });
    expect(await ctx.store.messages.count()).toBe(1);
  });

  it('refuses, writing nothing, the batch of a broadcast canceled meanwhile', async () => {
    const b = broadcast({ total: 2 });
    await ctx.store.broadcasts.accept({ record: b, entries: entries(2) });
    await ctx.store.broadcasts.cancel(b.id, new Date());
    const m = accepted({ broadcastId: b.id });
    const commit = ctx.store.messages.commit({ messages: [m], broadcastProgress: { broadcastId: b.id, from: 0, cursor: 1, skipped: 0, failures: [], suppressed: [] } });
    await expect(commit).rejects.toBeInstanceOf(BroadcastCanceled);
    expect(await ctx.store.messages.get(m.record.id)).toBeUndefined();
  });

  it('gives way to other writes in a bounded time, and commits a background batch like any other', async () => {
    await ctx.store.messages.giveWay();
    const m = accepted();
    await Promise.all([ctx.store.messages.commit({ messages: [accepted()] }), ctx.store.messages.giveWay().then(() => ctx.store.messages.commit({ messages: [m], background: true }))]);
    expect(await ctx.store.messages.count()).toBe(2);
  });

  it('keeps a message to sign waiting, with its body, until its finished body is stored', async () => {
    const m = accepted({ sign: 'sender.test' });
    await ctx.store.messages.commit({ messages: [m] });
    expect(await ctx.store.messages.isUnfinished(m.record.id)).toBe(true);
    expect(await ctx.store.messages.unfinishedCount()).toBe(1);
    expect(await ctx.store.messages.unfinishedAfter(undefined, 10)).toEqual([m.record.id]);
    const u = await ctx.store.messages.unfinished(m.record.id);
    expect(u).toMatchObject({ accountId: ACCOUNT, domain: 'sender.test', gone: false });
    expect(Buffer.from(u!.body!)).toEqual(Buffer.from(m.body!));
    const signed = Buffer.from('DKIM-Signature: x\r\nSubject: Contract\r\n\r\nsigned\r\n');
    expect(await ctx.store.messages.storeFinished([{ messageId: m.record.id, body: signed }])).toBe(1);
    expect(await ctx.store.messages.isUnfinished(m.record.id)).toBe(false);
    expect(await ctx.store.messages.unfinished(m.record.id)).toBeUndefined();
    expect(Buffer.from((await ctx.store.messages.body(m.record.id))!)).toEqual(signed);
    expect(await ctx.store.messages.unfinishedCount()).toBe(0);
    expect(await ctx.store.messages.oldestUnfinishedMs(Date.now())).toBe(0);
  });

  it('stores a composed message with what composition learned, and a message not waiting not at all', async () => {
    const m = accepted({ compose: { template: 'request' } });
    await ctx.store.messages.commit({ messages: [m] });
    const u = await ctx.store.messages.unfinished(m.record.id);
    expect(u).toMatchObject({ compose: { template: 'request' }, body: undefined, gone: false });
    const body = Buffer.from('Subject: composed\r\n\r\nhi\r\n');
    expect(await ctx.store.messages.storeFinished([{ messageId: m.record.id, body, composed: true, record: { html: '<p>hi</p>', size: body.length } }])).toBe(1);
    expect(await ctx.store.messages.get(m.record.id)).toMatchObject({ html: '<p>hi</p>', size: body.length });
    expect(await ctx.store.messages.storeFinished([{ messageId: 'no-such-id', body }])).toBe(0);
  });

  it("neither stores nor releases a message finished after its channel's delete, and says it is gone", async () => {
    const accountId = (await ctx.store.accounts.create({ name: 'a', state: 'active' })).id;
    const channel = await ctx.store.channels.create({ accountId, name: 'main', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 10 });
    const [kept, dropped] = [accepted({ sign: 'sender.test' }), accepted({ sign: 'sender.test', accountId, channelId: channel.id })];
    await ctx.store.messages.commit({ messages: [kept] });
    await ctx.store.messages.commit({ messages: [dropped] });
    await ctx.store.channels.delete(channel.id);
    expect(await ctx.store.messages.unfinished(dropped.record.id)).toMatchObject({ gone: true });
    expect(await ctx.store.messages.unfinished(kept.record.id)).toMatchObject({ gone: false });
    const body = Buffer.from('Subject: signed\r\n\r\nhi\r\n');
    // One call with both, as the finishing stage batches them: only the live channel's is stored and made due.
    expect(await ctx.store.messages.storeFinished([{ messageId: dropped.record.id, body }, { messageId: kept.record.id, body }])).toBe(1);
    expect(Buffer.from((await ctx.store.messages.body(kept.record.id))!)).toEqual(body);
    expect(await ctx.store.messages.isUnfinished(dropped.record.id)).toBe(false);
  });

  it('stores a message finished twice at once only once', async () => {
    const m = accepted({ sign: 'sender.test' });
    await ctx.store.messages.commit({ messages: [m] });
    const bodies = ['one', 'two', 'three'].map((s) => Buffer.from(`Subject: ${s}\r\n\r\n${s}\r\n`));
    const released = await Promise.all(bodies.map((body) => ctx.store.messages.storeFinished([{ messageId: m.record.id, body }])));
    expect(released.reduce((a, b) => a + b, 0)).toBe(1);
    const stored = Buffer.from((await ctx.store.messages.body(m.record.id))!);
    expect(bodies[released.indexOf(1)]).toEqual(stored);
  });

  it('pages the waiting messages in id order and says how long the oldest has waited', async () => {
    const old = Date.now() - 60_000;
    const ms = [0, 1, 2].map((i) => accepted({ sign: 'sender.test', createdAt: new Date(old + i * 1000).toISOString() }));
    await ctx.store.messages.commit({ messages: ms });
    const ids = ms.map((m) => m.record.id).sort();
    expect(await ctx.store.messages.unfinishedAfter(undefined, 2)).toEqual(ids.slice(0, 2));
    expect(await ctx.store.messages.unfinishedAfter(ids[1], 2)).toEqual(ids.slice(2));
    expect(await ctx.store.messages.oldestUnfinishedMs(old + 61_000)).toBe(61_000);
  });

  it("keeps a waiting message's failed tries, and ignores them for a message no longer waiting", async () => {
    const m = accepted({ compose: { template: 'request' } });
    await ctx.store.messages.commit({ messages: [m] });
    await ctx.store.messages.recordFinishingTries(m.record.id, { tries: 2, same: 2, last: 'bad', code: 'templating_error' });
    expect((await ctx.store.messages.unfinished(m.record.id))?.failures).toEqual({ tries: 2, same: 2, last: 'bad', code: 'templating_error' });
    await ctx.store.messages.recordFinishingTries('no-such-id', { tries: 1, same: 0 });
    expect(await ctx.store.messages.unfinished('no-such-id')).toBeUndefined();
  });

  it('ends a message that cannot be finished as bounced for every recipient, and sent', async () => {
    const m = accepted({ compose: { template: 'request' }, to: ['ann@example.org', 'bob@example.net'] });
    await ctx.store.messages.commit({ messages: [m] });
    const bounced = await ctx.store.messages.endUnfinished({ messageId: m.record.id, failure: FAILURE });
    expect(bounced.sort()).toEqual(['ann@example.org', 'bob@example.net']);
    expect(await ctx.store.messages.get(m.record.id)).toMatchObject({ status: 'sent', openJobs: 0 });
    expect(await ctx.store.messages.isUnfinished(m.record.id)).toBe(false);
    expect(await ctx.store.messages.endUnfinished({ messageId: m.record.id, failure: FAILURE })).toEqual([]);
  });

  it('ends a message once when racing callers end it', async () => {
    const m = accepted({ compose: { template: 'request' } });
    await ctx.store.messages.commit({ messages: [m] });
    const results = await Promise.all(Array.from({ length: 4 }, () => ctx.store.messages.endUnfinished({ messageId: m.record.id, failure: FAILURE })));
    expect(results.filter((r) => r.length > 0)).toEqual([['rcpt@example.org']]);
  });

  it("turns a broadcast's message that ends unfinished into its entry's failure row, in the same write", async () => {
    const b = broadcast({ total: 1 });
    await ctx.store.broadcasts.accept({ record: b, entries: entries(1) });
    const m = accepted({ broadcastId: b.id, compose: { template: 'request' } });
    await ctx.store.messages.commit({ messages: [m], broadcastProgress: { broadcastId: b.id, from: 0, cursor: 1, skipped: 0, failures: [], suppressed: [] } });
    const failedEntry = { index: 0, code: 'templating_error', message: 'does not render' };
    expect(await ctx.store.messages.endUnfinished({ messageId: m.record.id, failure: FAILURE, failedEntry })).toEqual(['rcpt@example.org']);
    expect(await ctx.store.broadcasts.get(b.id)).toMatchObject({ messages: 0, failed: 1 });
    const failures = await ctx.store.broadcasts.failures(b.id, { limit: 10, offset: 0 });
    expect(failures).toEqual({ totalCount: 1, results: [{ index: 0, to: m.record.to, cc: [], bcc: [], code: 'templating_error', message: 'does not render' }] });
  });
});
