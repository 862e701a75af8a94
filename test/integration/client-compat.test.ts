/**
 * What real HTTP clients do that must work (issue 18): headers, methods and bodies that
 * libraries send by default, answered like the plain requests they stand for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon;

beforeAll(async () => {
  t = await startDaemon();
});

afterAll(async () => {
  await t?.stop();
});

async function createChannel(name: string): Promise<string> {
  const res = await t.api('POST', '/channels', { body: { name } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

const JSON_CT = { 'content-type': 'application/json' };

describe('Content-Type: application/json with an empty body', () => {
  it('deletes a channel as if the header were absent', async () => {
    const id = await createChannel('empty-delete');
    const res = await t.api('DELETE', `/channels/${id}`, { headers: JSON_CT, rawBody: '' });
    expect(res.status, JSON.stringify(res.body)).toBe(204);
    expect(res.headers.get('connection')).not.toBe('close');
  });

  it('serves the bodiless POSTs (verify, rotate-key, regenerate-signing-key, cancel) as if the header were absent', async () => {
    const paths = ['/domains/00000000-0000-4000-8000-000000000000/verify', '/domains/00000000-0000-4000-8000-000000000000/rotate-key',
      '/webhooks/00000000-0000-4000-8000-000000000000/regenerate-signing-key', '/broadcasts/00000000-0000-4000-8000-000000000000/cancel'];
    for (const p of paths) {
      const plain = await t.api('POST', p);
      const res = await t.api('POST', p, { headers: JSON_CT, rawBody: '' });
      expect(res.status, `${p} ${JSON.stringify(res.body)}`).toBe(plain.status);
      expect(res.body.code, p).toBe(plain.body.code);
      expect(res.body.code, p).not.toBe('invalid_json');
    }
  });
});
