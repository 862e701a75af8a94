import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type ApiResponse, type TestDaemon } from '../support/daemon.js';
import { newAccount } from '../support/domains.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let t: TestDaemon;

beforeAll(async () => {
  t = await startDaemon();
});

afterAll(async () => {
  await t?.stop();
});

/** An account-level key of a new, empty account, so list tests see only their own channels. */
async function freshAccountKey(d: TestDaemon = t): Promise<string> {
  return (await newAccount(d)).key;
}

async function create(body: unknown, key?: string, d: TestDaemon = t): Promise<any> {
  const res = await d.api('POST', '/channels', { body, key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Expects a 422 validation_failed problem and returns its field errors. */
function fieldErrors(res: ApiResponse): Record<string, { code: string; message: string }[]> {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body.code).toBe('validation_failed');
  return res.body.errors;
}

function codesAt(res: ApiResponse, pointer: string): string[] {
  return (fieldErrors(res)[pointer] ?? []).map((e) => e.code);
}

describe('POST /channels', () => {
  it('creates a live channel without tracking when only the name is given', async () => {
    const res = await t.api('POST', '/channels', { body: { name: 'Receipts' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Receipts',
      deliveryType: 'live',
      tracking: { links: false, opens: false },
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    expect(res.body.updatedAt).toBe(res.body.createdAt);
  });

  it('creates a channel with every field given', async () => {
    const body = await create({ name: 'Newsletter', deliveryType: 'sandbox', tracking: { links: true, opens: true } });
    expect(body).toMatchObject({ name: 'Newsletter', deliveryType: 'sandbox', tracking: { links: true, opens: true } });
  });

  it('fills in the tracking flag that is left out', async () => {
    const body = await create({ name: 'Half tracking', tracking: { opens: true } });
    expect(body.tracking).toEqual({ links: false, opens: true });
  });

  it('gives every channel its own id', async () => {
    const [a, b] = await Promise.all([create({ name: 'same' }), create({ name: 'same' })]);
    expect(a.id).not.toBe(b.id);
  });

  it('requires a name', async () => {
    const res = await t.api('POST', '/channels', { body: { deliveryType: 'live' } });
    expect(fieldErrors(res)).toEqual({ '/name': [{ code: 'required', message: 'is required' }] });
  });

  it('refuses an empty name', async () => {
    expect(codesAt(await t.api('POST', '/channels', { body: { name: '' } }), '/name')).toEqual(['min_length']);
  });

  it('accepts a name of 100 characters and refuses one of 101 with max_length at /name', async () => {
    await create({ name: 'n'.repeat(100) });
    const res = await t.api('POST', '/channels', { body: { name: 'n'.repeat(101) } });
    expect(fieldErrors(res)['/name']).toEqual([{ code: 'max_length', message: 'must be at most 100 characters' }]);
  });

  it('counts characters, not bytes, against the name limit', async () => {
    const body = await create({ name: 'é'.repeat(100) });
    expect(body.name).toBe('é'.repeat(100));
  });

  it('refuses control characters in the name', async () => {
    for (const name of ['line\nbreak', 'carriage\rreturn', 'tab\there', 'nul\u0000', 'del\u007f']) {
      const res = await t.api('POST', '/channels', { body: { name } });
      expect(codesAt(res, '/name'), JSON.stringify(name)).toEqual(['invalid_format']);
    }
  });

  it('refuses an unknown property instead of stripping it, and creates nothing', async () => {
    const key = await freshAccountKey();
    const res = await t.api('POST', '/channels', { key, body: { name: 'x', color: 'red' } });
    expect(fieldErrors(res)).toEqual({ '/color': [{ code: 'unknown_field', message: 'is not a known field' }] });
    const nested = await t.api('POST', '/channels', { key, body: { name: 'x', tracking: { links: true, clicks: true } } });
    expect(codesAt(nested, '/tracking/clicks')).toEqual(['unknown_field']);
    expect((await t.api('GET', '/channels', { key })).body.totalCount).toBe(0);
  });

  it('refuses values of the wrong type without coercing them', async () => {
    expect(codesAt(await t.api('POST', '/channels', { body: { name: 5 } }), '/name')).toEqual(['invalid_type']);
    expect(codesAt(await t.api('POST', '/channels', { body: { name: 'x', deliveryType: 'bulk' } }), '/deliveryType')).toEqual(['invalid_value']);
    expect(codesAt(await t.api('POST', '/channels', { body: { name: 'x', tracking: true } }), '/tracking')).toEqual(['invalid_type']);
    expect(codesAt(await t.api('POST', '/channels', { body: { name: 'x', tracking: { links: 'true' } } }), '/tracking/links')).toEqual(['invalid_type']);
    expect(codesAt(await t.api('POST', '/channels', { body: { name: 'x', tracking: { opens: 1 } } }), '/tracking/opens')).toEqual(['invalid_type']);
  });

  it('refuses a body that is not an object', async () => {
    for (const body of [[{ name: 'x' }], 'x', null]) {
      expect(codesAt(await t.api('POST', '/channels', { body }), '/'), JSON.stringify(body)).toEqual(['invalid_type']);
    }
  });

  it('reports several errors of one request together', async () => {
    const res = await t.api('POST', '/channels', { body: { name: '', deliveryType: 'x', tracking: { opens: 1 }, extra: 1 } });
    const errors = fieldErrors(res);
    expect(Object.keys(errors).sort()).toEqual(['/deliveryType', '/extra', '/name', '/tracking/opens']);
    expect(errors['/name'][0].code).toBe('min_length');
    expect(errors['/deliveryType'][0].code).toBe('invalid_value');
    expect(errors['/tracking/opens'][0].code).toBe('invalid_type');
    expect(errors['/extra'][0].code).toBe('unknown_field');
    expect(res.body).toMatchObject({ status: 422, title: 'Validation failed', instance: 'POST /channels' });
  });
});

describe('GET /channels', () => {
  let key: string;
  let all: any[];

  beforeAll(async () => {
    key = await freshAccountKey();
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        create({ name: i === 0 ? 'Receipts EU' : i === 1 ? 'receipts US' : `bulk ${i}`, deliveryType: i % 3 === 0 ? 'sandbox' : 'live' }, key),
      ),
    );
    const res = await t.api('GET', '/channels?limit=500', { key });
    expect(res.status).toBe(200);
    all = res.body.results;
    expect(all).toHaveLength(30);
  });

  it('returns the first 25 channels in the summary form with the total count', async () => {
    const res = await t.api('GET', '/channels', { key });
    expect(res.status).toBe(200);
    expect(res.body.totalCount).toBe(30);
    expect(res.body.results).toHaveLength(25);
    expect(res.body.results).toEqual(all.slice(0, 25));
    for (const c of res.body.results) {
      expect(Object.keys(c).sort()).toEqual(['createdAt', 'deliveryType', 'id', 'name']);
    }
  });

  it('pages with limit and offset, keeping totalCount at the number of matches', async () => {
    const page = await t.api('GET', '/channels?limit=10&offset=5', { key });
    expect(page.body.results).toEqual(all.slice(5, 15));
    expect(page.body.totalCount).toBe(30);
    const tail = await t.api('GET', '/channels?offset=25', { key });
    expect(tail.body.results).toEqual(all.slice(25));
    const beyond = await t.api('GET', '/channels?offset=100', { key });
    expect(beyond.body).toEqual({ results: [], totalCount: 30 });
  });

  it('pages through every channel exactly once', async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < 30; offset += 7) {
      seen.push(...(await t.api('GET', `/channels?limit=7&offset=${offset}`, { key })).body.results.map((c: any) => c.id));
    }
    expect(seen).toEqual(all.map((c) => c.id));
    expect(new Set(seen).size).toBe(30);
  });

  it('refuses limit 0 and limit 501, and accepts 500', async () => {
    expect(codesAt(await t.api('GET', '/channels?limit=0', { key }), '/limit')).toEqual(['min_value']);
    expect(codesAt(await t.api('GET', '/channels?limit=501', { key }), '/limit')).toEqual(['max_value']);
    expect((await t.api('GET', '/channels?limit=500', { key })).status).toBe(200);
  });

  it('refuses a limit or offset that is not a whole number, and a negative offset', async () => {
    expect(codesAt(await t.api('GET', '/channels?limit=abc', { key }), '/limit')).toEqual(['invalid_type']);
    expect(codesAt(await t.api('GET', '/channels?limit=2.5', { key }), '/limit')).toEqual(['invalid_type']);
    expect(codesAt(await t.api('GET', '/channels?offset=-1', { key }), '/offset')).toEqual(['min_value']);
  });

  it('ignores an unknown query parameter (a cache-buster)', async () => {
    expect((await t.api('GET', '/channels?colour=red', { key })).status).toBe(200);
  });

  it('filters by a case-insensitive partial match on the name', async () => {
    const res = await t.api('GET', '/channels?name=RECEIPT', { key });
    expect(res.body.totalCount).toBe(2);
    expect(res.body.results.map((c: any) => c.name).sort()).toEqual(['Receipts EU', 'receipts US']);
    const middle = await t.api('GET', `/channels?name=${encodeURIComponent('ts u')}`, { key });
    expect(middle.body.results.map((c: any) => c.name)).toEqual(['receipts US']);
    expect((await t.api('GET', '/channels?name=nothing-like-this', { key })).body).toEqual({ results: [], totalCount: 0 });
  });

  it('restricts the list to a comma-separated list of channel ids', async () => {
    const ids = [all[3].id, all[17].id, all[29].id];
    const res = await t.api('GET', `/channels?channelIds=${ids.join(',')}`, { key });
    expect(res.body.totalCount).toBe(3);
    expect(res.body.results.map((c: any) => c.id).sort()).toEqual([...ids].sort());
    const upper = await t.api('GET', `/channels?channelIds=${all[3].id.toUpperCase()}`, { key });
    expect(upper.body.results.map((c: any) => c.id)).toEqual([all[3].id]);
  });

  it('reads an empty channelIds (a client joining an empty array) as no filter, as an empty tags is', async () => {
    const every = (await t.api('GET', '/channels', { key })).body.totalCount;
    expect(every).toBeGreaterThan(0);
    expect((await t.api('GET', '/channels?channelIds=', { key })).body.totalCount).toBe(every);
    expect((await t.api('GET', '/channels?channelIds=,', { key })).body.totalCount).toBe(every);
  });

  it('points at the bad entry when a channel id in the list is not a uuid', async () => {
    const res = await t.api('GET', `/channels?channelIds=${all[0].id},not-a-uuid,${all[1].id},42`, { key });
    const errors = fieldErrors(res);
    expect(Object.keys(errors).sort()).toEqual(['/channelIds/1', '/channelIds/3']);
    expect(errors['/channelIds/1'][0].code).toBe('invalid_format');
  });

  it('filters by delivery type and refuses an unknown one', async () => {
    const sandbox = await t.api('GET', '/channels?deliveryType=sandbox&limit=500', { key });
    expect(sandbox.body.totalCount).toBe(10);
    expect(sandbox.body.results.every((c: any) => c.deliveryType === 'sandbox')).toBe(true);
    const live = await t.api('GET', '/channels?deliveryType=live&limit=500', { key });
    expect(live.body.totalCount).toBe(20);
    expect(codesAt(await t.api('GET', '/channels?deliveryType=bulk', { key }), '/deliveryType')).toEqual(['invalid_value']);
  });

  it('combines filters and paging', async () => {
    const res = await t.api('GET', '/channels?deliveryType=live&name=bulk&limit=5&offset=2', { key });
    const expected = all.filter((c) => c.deliveryType === 'live' && c.name.includes('bulk'));
    expect(res.body.totalCount).toBe(expected.length);
    expect(res.body.results).toEqual(expected.slice(2, 7));
  });
});

describe('GET /channels/{id}', () => {
  it('returns the channel in the detailed form', async () => {
    const created = await create({ name: 'Detail', deliveryType: 'sandbox', tracking: { links: true, opens: false } });
    const res = await t.api('GET', `/channels/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
  });

  it('accepts the id in upper case', async () => {
    const created = await create({ name: 'Upper' });
    expect((await t.api('GET', `/channels/${created.id.toUpperCase()}`)).body.id).toBe(created.id);
  });

  it('answers 404 channel_not_found for an unknown id, 422 on /id for an id that is not a uuid', async () => {
    const res = await t.api('GET', '/channels/00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('channel_not_found');
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    for (const id of ['not-a-uuid', '1']) {
      const bad = await t.api('GET', `/channels/${id}`);
      expect(bad.status, id).toBe(422);
      expect(Object.keys(bad.body.errors)).toEqual(['/id']);
    }
  });
});

describe('PATCH /channels/{id}', () => {
  it('changes only the fields it is given', async () => {
    const created = await create({ name: 'Before', deliveryType: 'sandbox', tracking: { links: true, opens: true } });
    const res = await t.api('PATCH', `/channels/${created.id}`, { body: { name: 'After' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, name: 'After', deliveryType: 'sandbox', tracking: { links: true, opens: true }, createdAt: created.createdAt });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
    expect((await t.api('GET', `/channels/${created.id}`)).body).toEqual(res.body);
  });

  it('merges tracking instead of replacing it', async () => {
    const created = await create({ name: 'Tracking', tracking: { links: true, opens: false } });
    const res = await t.api('PATCH', `/channels/${created.id}`, { body: { tracking: { opens: true } } });
    expect(res.body.tracking).toEqual({ links: true, opens: true });
    const off = await t.api('PATCH', `/channels/${created.id}`, { body: { tracking: { links: false } } });
    expect(off.body.tracking).toEqual({ links: false, opens: true });
  });

  it('changes the delivery type', async () => {
    const created = await create({ name: 'Switch' });
    const res = await t.api('PATCH', `/channels/${created.id}`, { body: { deliveryType: 'sandbox' } });
    expect(res.body.deliveryType).toBe('sandbox');
    expect((await t.api('GET', `/channels?channelIds=${created.id}`)).body.results[0].deliveryType).toBe('sandbox');
  });

  it('leaves the channel as it was when the update is empty', async () => {
    const created = await create({ name: 'Empty patch' });
    const res = await t.api('PATCH', `/channels/${created.id}`, { body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Empty patch', deliveryType: 'live', tracking: { links: false, opens: false } });
  });

  it('refuses invalid fields, all of them together, and changes nothing', async () => {
    const created = await create({ name: 'Keep me' });
    const res = await t.api('PATCH', `/channels/${created.id}`, { body: { name: 'x'.repeat(101), deliveryType: 'bulk', owner: 'me' } });
    const errors = fieldErrors(res);
    expect(Object.keys(errors).sort()).toEqual(['/deliveryType', '/name', '/owner']);
    expect(errors['/name'][0].code).toBe('max_length');
    expect((await t.api('GET', `/channels/${created.id}`)).body).toEqual(created);
  });

  it('answers 404 channel_not_found for an unknown channel', async () => {
    const res = await t.api('PATCH', '/channels/00000000-0000-4000-8000-000000000000', { body: { name: 'x' } });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('channel_not_found');
  });
});

describe('DELETE /channels/{id}', () => {
  it('answers 204 with an empty body, after which the channel is gone', async () => {
    const created = await create({ name: 'Doomed' });
    const res = await fetch(`${t.url}/channels/${created.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    const get = await t.api('GET', `/channels/${created.id}`);
    expect(get.status).toBe(404);
    expect(get.body.code).toBe('channel_not_found');
    expect((await t.api('GET', `/channels?channelIds=${created.id}`)).body).toEqual({ results: [], totalCount: 0 });
  });

  it('answers 404 when the channel is deleted a second time, or updated after deletion', async () => {
    const created = await create({ name: 'Twice' });
    expect((await t.api('DELETE', `/channels/${created.id}`)).status).toBe(204);
    const again = await t.api('DELETE', `/channels/${created.id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('channel_not_found');
    const patch = await t.api('PATCH', `/channels/${created.id}`, { body: { name: 'zombie' } });
    expect(patch.status).toBe(404);
  });

  it('answers 422 on /id for an id that is not a uuid', async () => {
    const res = await t.api('DELETE', '/channels/nope');
    expect(res.status).toBe(422);
    expect(res.body.errors['/id'][0].code).toBe('invalid_format');
  });

  it('lowers the count of the list by one', async () => {
    const key = await freshAccountKey();
    const a = await create({ name: 'a' }, key);
    await create({ name: 'b' }, key);
    expect((await t.api('DELETE', `/channels/${a.id}`, { key })).status).toBe(204);
    const list = await t.api('GET', '/channels', { key });
    expect(list.body.totalCount).toBe(1);
    expect(list.body.results[0].name).toBe('b');
  });
});

describe('the channel limit per account', () => {
  let small: TestDaemon;

  beforeAll(async () => {
    small = await startDaemon({ 'limits.channelsPerAccount': 3 });
  });

  afterAll(async () => {
    await small?.stop();
  });

  it('refuses the channel beyond the maximum with 403 resource_limit_exceeded until one is deleted', async () => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await create({ name: `c${i}` }, undefined, small));
    const over = await small.api('POST', '/channels', { body: { name: 'one too many' } });
    expect(over.status).toBe(403);
    expect(over.body).toMatchObject({ code: 'resource_limit_exceeded', status: 403, instance: 'POST /channels' });
    expect((await small.api('GET', '/channels')).body.totalCount).toBe(3);
    expect((await small.api('DELETE', `/channels/${made[0].id}`)).status).toBe(204);
    await create({ name: 'room again' }, undefined, small);
  });

  it('counts the limit per account', async () => {
    const key = await freshAccountKey(small);
    for (let i = 0; i < 3; i++) await create({ name: `other ${i}` }, key, small);
  });

  it('does not overshoot the maximum when creates race', async () => {
    const key = await freshAccountKey(small);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => small.api('POST', '/channels', { key, body: { name: `race ${i}` } })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect(results.filter((r) => r.status === 403 && r.body.code === 'resource_limit_exceeded')).toHaveLength(5);
    expect((await small.api('GET', '/channels', { key })).body.totalCount).toBe(3);
  });
});

describe('persistence', () => {
  it('keeps channels, their updates and deletions across a restart', async () => {
    const d = await startDaemon();
    try {
      const kept = await create({ name: 'Kept', deliveryType: 'sandbox', tracking: { links: true, opens: false } }, undefined, d);
      const updated = (await d.api('PATCH', `/channels/${kept.id}`, { body: { name: 'Kept and renamed' } })).body;
      const gone = await create({ name: 'Gone' }, undefined, d);
      expect((await d.api('DELETE', `/channels/${gone.id}`)).status).toBe(204);

      await d.restart();

      const get = await d.api('GET', `/channels/${kept.id}`);
      expect(get.status).toBe(200);
      expect(get.body).toEqual(updated);
      expect((await d.api('GET', `/channels/${gone.id}`)).status).toBe(404);
      expect((await d.api('GET', '/channels')).body).toEqual({
        results: [{ id: kept.id, name: 'Kept and renamed', deliveryType: 'sandbox', createdAt: kept.createdAt }],
        totalCount: 1,
      });
    } finally {
      await d.stop();
    }
  });
});
