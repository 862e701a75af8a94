/**
 * A channel's ipPool (issue 35): set, changed and removed through the channel API, refused with
 * 422 when it names no configured pool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;

beforeAll(async () => {
  t = await startDaemon({
    'delivery.sources': [{ name: 'ip2', address: '127.0.0.2' }, { name: 'ip3', address: '127.0.0.3' }],
    'delivery.pools': { tx: [{ source: 'ip2', weight: 1 }], bulk: [{ source: 'ip3', weight: 1 }] },
  });
});

afterAll(async () => {
  await t?.stop();
});

describe('channel ipPool', () => {
  it('is set at create, shown by GET, replaced and removed by PATCH', async () => {
    const created = await t.api('POST', '/channels', { body: { name: 'Receipts', ipPool: 'tx' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.ipPool).toBe('tx');
    const id = created.body.id as string;
    expect((await t.api('GET', `/channels/${id}`)).body.ipPool).toBe('tx');
    expect((await t.api('PATCH', `/channels/${id}`, { body: { ipPool: 'bulk' } })).body.ipPool).toBe('bulk');
    // "default" is always a pool: every source alike when delivery.pools does not define it.
    expect((await t.api('PATCH', `/channels/${id}`, { body: { ipPool: 'default' } })).body.ipPool).toBe('default');
    const cleared = await t.api('PATCH', `/channels/${id}`, { body: { ipPool: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body).not.toHaveProperty('ipPool');
    expect((await t.api('POST', '/channels', { body: { name: 'Plain' } })).body).not.toHaveProperty('ipPool');
  });

  it('is 422 validation_failed (unknown_pool at /ipPool) when no pool has that name, at create and at PATCH', async () => {
    const res = await t.api('POST', '/channels', { body: { name: 'News', ipPool: 'nope' } });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors['/ipPool'][0].code).toBe('unknown_pool');
    const id = (await t.api('POST', '/channels', { body: { name: 'News' } })).body.id as string;
    const patched = await t.api('PATCH', `/channels/${id}`, { body: { ipPool: 'nope' } });
    expect(patched.status).toBe(422);
    expect(patched.body.errors['/ipPool'][0].code).toBe('unknown_pool');
    expect((await t.api('GET', `/channels/${id}`)).body).not.toHaveProperty('ipPool');
  });
});
