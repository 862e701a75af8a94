import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { newAccount } from '../support/domains.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let t: TestDaemon;
let channelId: string;

beforeAll(async () => {
  t = await startDaemon();
  channelId = (await t.api('POST', '/channels', { body: { name: 'Suppressions' } })).body.id;
  await t.api('POST', '/suppressions', { body: { channelId, mailType: 'transactional', emails: ['Carol@Example.com', 'alice@example.com'] } });
  await t.api('POST', '/suppressions', { body: { channelId, mailType: 'broadcast', emails: ['dave@example.net'] } });
  // Bounces and complaints add themselves during delivery; written here directly to have every reason.
  await t.daemon.store.suppressions.apply(channelId, 'transactional', [
    { op: 'add', email: 'bob@example.org', reason: 'bounce' },
    { op: 'add', email: 'erin@example.org', reason: 'complaint' },
  ]);
});

afterAll(async () => {
  await t?.stop();
});

const list = (query: string, key?: string) => t.api('GET', `/suppressions?${query}`, { key });

describe('GET /suppressions', () => {
  it('lists a channel and mail type in address order with email, reason and createdAt', async () => {
    const res = await list(`channelId=${channelId}&mailType=transactional`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.totalCount).toBe(4);
    expect(res.body.results.map((r: any) => [r.email, r.reason])).toEqual([
      ['alice@example.com', 'manual'],
      ['bob@example.org', 'bounce'],
      ['carol@example.com', 'manual'],
      ['erin@example.org', 'complaint'],
    ]);
    for (const r of res.body.results) expect(r).toEqual({ email: expect.any(String), reason: expect.any(String), createdAt: expect.stringMatching(ISO) });
  });

  it('keeps the mail types apart', async () => {
    const res = await list(`channelId=${channelId}&mailType=broadcast`);
    expect(res.body).toEqual({ totalCount: 1, results: [{ email: 'dave@example.net', reason: 'manual', createdAt: expect.stringMatching(ISO) }] });
  });

  it('filters by reason and by a part of the address, case-insensitively', async () => {
    expect((await list(`channelId=${channelId}&mailType=transactional&reason=bounce`)).body.results.map((r: any) => r.email)).toEqual(['bob@example.org']);
    const partial = await list(`channelId=${channelId}&mailType=transactional&email=EXAMPLE.COM`);
    expect(partial.body.totalCount).toBe(2);
    expect(partial.body.results.map((r: any) => r.email)).toEqual(['alice@example.com', 'carol@example.com']);
  });

  it('pages with limit and offset while totalCount counts every match', async () => {
    const res = await list(`channelId=${channelId}&mailType=transactional&limit=2&offset=1`);
    expect(res.body.totalCount).toBe(4);
    expect(res.body.results.map((r: any) => r.email)).toEqual(['bob@example.org', 'carol@example.com']);
  });

  it('shows a removed address no more', async () => {
    await t.api('POST', '/suppressions/remove', { body: { channelId, mailType: 'broadcast', emails: ['dave@example.net'] } });
    expect((await list(`channelId=${channelId}&mailType=broadcast`)).body).toEqual({ totalCount: 0, results: [] });
  });

  it('reports every bad parameter together with pointers', async () => {
    const res = await list('reason=spam&limit=0');
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(Object.keys(res.body.errors).sort()).toEqual(['/channelId', '/limit', '/mailType', '/reason']);
  });

  it('answers 401 without a valid key', async () => {
    expect((await list(`channelId=${channelId}&mailType=transactional`, null as unknown as string)).status).toBe(401);
    expect((await list(`channelId=${channelId}&mailType=transactional`, 'nope')).status).toBe(401);
  });

  it("answers 403 for another account's channel and 404 for an unknown one", async () => {
    const { key: otherKey } = await newAccount(t);
    expect((await list(`channelId=${channelId}&mailType=transactional`, otherKey)).status).toBe(403);
    const res = await list('channelId=00000000-0000-4000-8000-000000000000&mailType=transactional');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('channel_not_found');
  });
});
