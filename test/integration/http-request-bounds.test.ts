/**
 * Issue 29, item 2: no unauthenticated work beyond the headers, and bounded work and memory per
 * HTTP request whoever sends it: the body caps of the JSON pre-scan, the bounded 422, the
 * first-error validation of large bodies and the server-wide budget of buffered body bytes.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { MAX_FIELD_ERRORS } from '../../src/domain/errors.js';
import { PUBLIC_BODY_LIMIT } from '../../src/http/server.js';
import { MAX_BODY_DEPTH, MAX_KEYS_PER_OBJECT, MIN_MAX_BODY_VALUES } from '../../src/http/json-scan.js';
import { FULL_REPORT_MAX_VALUES } from '../../src/http/validators.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { waitFor } from '../support/wait.js';

const MiB = 1024 * 1024;
const JSON_CT = { 'content-type': 'application/json' };

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

interface HeldBody {
  /** The answer, which may come before the body is complete. */
  answer: Promise<Answer>;
  /** Sends the rest of the declared body. */
  finish(): void;
  /** Closes the connection mid-body. */
  abort(): void;
}

/**
 * A request that declares a `declared`-byte body (Content-Length, or chunked when null) and sends
 * only its first `sent` bytes (spaces: whitespace in JSON), until finish() or abort().
 */
function holdBody(t: TestDaemon, o: { method: string; path: string; headers?: Record<string, string>; declared: number | null; sent: number }): HeldBody {
  const u = new URL(t.url + o.path);
  const headers: Record<string, string> = { ...JSON_CT, ...o.headers };
  if (o.declared !== null) headers['content-length'] = String(o.declared);
  const req = http.request({ host: u.hostname, port: u.port, method: o.method, path: u.pathname + u.search, headers });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
  });
  req.write(Buffer.alloc(o.sent, 0x20));
  return {
    answer,
    finish: () => req.end(o.declared === null ? undefined : Buffer.alloc(o.declared - o.sent, 0x20)),
    abort: () => {
      answer.catch(() => {}); // an answer never awaited: the reset is expected
      req.destroy();
    },
  };
}

/** The answer to a request whose 40 MiB body is still unsent: proof that nothing waited for it. */
async function answerBeforeBody(t: TestDaemon, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const held = holdBody(t, { method, path, headers, declared: 40 * MiB, sent: 64 * 1024 });
  try {
    return await held.answer;
  } finally {
    held.abort();
  }
}

const manyKeys = (n: number, prefix = 'k') => `{${Array.from({ length: n }, (_, i) => `"${prefix}${i}":0`).join(',')}}`;

describe('with the default limits', () => {
  let t: TestDaemon;

  beforeAll(async () => {
    t = await startDaemon();
  });

  afterAll(async () => {
    await t?.stop();
  });

  describe('no unauthenticated work beyond the headers', () => {
    it('answers a 40 MiB body without a key, or with a wrong key, with 401 before the body is sent', async () => {
      for (const headers of [{}, { authorization: 'Bearer pr_wrong' }] as Array<Record<string, string>>) {
        const res = await answerBeforeBody(t, 'POST', '/send/broadcast', headers);
        expect(res.status, JSON.stringify(res.body)).toBe(401);
        expect(res.body.code).toBe('unauthorized');
      }
    });

    it('answers an unknown path (404) and a method a path lacks (405) from the headers, before the body is sent', async () => {
      for (const headers of [{}, { authorization: `Bearer ${t.apiKey}` }] as Array<Record<string, string>>) {
        expect((await answerBeforeBody(t, 'POST', '/no-such-route', headers)).body.code).toBe('not_found');
        const res = await answerBeforeBody(t, 'PUT', '/channels', headers);
        expect(res.body.code).toBe('method_not_allowed');
        expect(res.headers.allow).toBe('GET, HEAD, POST');
      }
    });

    it('does not parse the body of an unknown path or a wrong method (a broken body is still 404 and 405)', async () => {
      const notFound = await t.api('POST', '/no-such-route', { key: null, rawBody: '{"a":' });
      expect(notFound.status, JSON.stringify(notFound.body)).toBe(404);
      const wrongMethod = await t.api('PATCH', '/channels', { rawBody: '{"a":' });
      expect(wrongMethod.status, JSON.stringify(wrongMethod.body)).toBe(405);
    });

    it(`reads at most ${PUBLIC_BODY_LIMIT} bytes on the public routes that take a body, and says so with 413`, async () => {
      // The one-click unsubscribe form keeps its own, smaller limit (RFC 8058: a few bytes).
      const routes: Array<[string, string, number]> = [['POST', '/dashboard/session', PUBLIC_BODY_LIMIT], ['DELETE', '/dashboard/session', PUBLIC_BODY_LIMIT], ['POST', '/unsubscribe?token=x', 4096], ['POST', '/unsubscribe/resubscribe?token=x', 4096]];
      const tooLarge = JSON.stringify({ apiKey: 'x'.repeat(PUBLIC_BODY_LIMIT) });
      for (const [method, path, limit] of routes) {
        const early = await answerBeforeBody(t, method, path, { 'x-postrider-dashboard': '1' });
        expect(early.status, `${method} ${path}`).toBe(413);
        expect(early.body.detail).toBe(`The body exceeds ${limit} bytes`);
        const sent = await t.api(method, path, { key: null, headers: { 'x-postrider-dashboard': '1' }, rawBody: tooLarge });
        expect(sent.status, `${method} ${path}`).toBe(413);
      }
    });
  });

  describe('the parser on public routes', () => {
    it('refuses duplicate and prototype-changing keys on the public routes that take a body, with 422 before anything else', async () => {
      const cases: Array<[string, string, string]> = [['DELETE', '/dashboard/session', '{"__proto__":{}}'], ['POST', '/unsubscribe?token=x', '{"a":1,"a":2}'], ['POST', '/unsubscribe/resubscribe?token=x', '{"a":1,"a":2}']];
      for (const [method, path, rawBody] of cases) {
        const res = await t.api(method, path, { key: null, rawBody });
        expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(422);
        expect((Object.values(res.body.errors).flat() as Array<{ code: string }>)[0].code).toMatch(/^(reserved|duplicate)$/);
      }
    });
  });

  describe('bounded parse work', () => {
    it(`refuses an object of more than ${MAX_KEYS_PER_OBJECT} keys with 422 max_properties at the object, before any key is checked`, async () => {
      const res = await t.api('POST', '/channels', { rawBody: `{"name":"wide","tracking":${manyKeys(MAX_KEYS_PER_OBJECT + 1)}}` });
      expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(422);
      expect(res.body.errors).toEqual({ '/tracking': [{ code: 'max_properties', message: `must not have more than ${MAX_KEYS_PER_OBJECT} keys` }] });
    });

    it(`refuses a body nested more than ${MAX_BODY_DEPTH} levels deep with 422 max_depth, also when it is not even closed`, async () => {
      const res = await t.api('POST', '/channels', { rawBody: '['.repeat(MiB) });
      expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(422);
      expect(Object.values(res.body.errors).flat()).toEqual([{ code: 'max_depth', message: `must not be nested more than ${MAX_BODY_DEPTH} levels deep` }]);
    });

    it(`refuses a body of more than ${MIN_MAX_BODY_VALUES} JSON values with 413 naming the cap`, async () => {
      const res = await t.api('POST', '/channels', { rawBody: `[${'0,'.repeat(MIN_MAX_BODY_VALUES)}0]` });
      expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(413);
      expect(res.body).toMatchObject({ code: 'payload_too_large', detail: `The body has more than ${MIN_MAX_BODY_VALUES} JSON values` });
    });
  });

  describe('bounded 422', () => {
    it(`lists the first ${MAX_FIELD_ERRORS} field errors and counts the rest in errorsOmitted`, async () => {
      const res = await t.api('POST', '/channels', { rawBody: manyKeys(500, 'unknown') });
      expect(res.status).toBe(422);
      const listed = Object.values(res.body.errors).flat();
      expect(listed).toHaveLength(MAX_FIELD_ERRORS);
      // 500 unknown fields and the missing name.
      expect(res.body.errorsOmitted).toBe(501 - MAX_FIELD_ERRORS);
    });

    it('does the same for an unauthenticated login with thousands of unknown keys', async () => {
      const res = await t.api('POST', '/dashboard/session', { key: null, headers: { 'x-postrider-dashboard': '1' }, rawBody: manyKeys(1500) });
      expect(res.status).toBe(422);
      expect(Object.values(res.body.errors).flat()).toHaveLength(MAX_FIELD_ERRORS);
      expect(res.body.errorsOmitted).toBe(1501 - MAX_FIELD_ERRORS);
    });

    it(`reports every schema error of a body of up to ${FULL_REPORT_MAX_VALUES} values, and the first one of a larger body`, async () => {
      const body = (n: number) => JSON.stringify({ tracking: 'no', extra: Array.from({ length: n }, () => 0) });
      const small = await t.api('POST', '/channels', { rawBody: body(10) });
      expect(Object.keys(small.body.errors).sort()).toEqual(['/extra', '/name', '/tracking']);
      const large = await t.api('POST', '/channels', { rawBody: body(FULL_REPORT_MAX_VALUES) });
      expect(large.status).toBe(422);
      expect(Object.values(large.body.errors).flat()).toHaveLength(1);
      expect(large.body.errorsOmitted).toBeUndefined();
    });
  });
});

describe('the budget of body bytes buffered at once (http.bodyBufferLimit)', () => {
  const BODY_LIMIT = 256 * 1024;
  let t: TestDaemon;

  beforeAll(async () => {
    t = await startDaemon({ 'http.bodyLimit': BODY_LIMIT, 'http.bodyBufferLimit': 4 * BODY_LIMIT });
  });

  afterAll(async () => {
    await t?.stop();
  });

  const auth = () => ({ authorization: `Bearer ${t.apiKey}` });
  const buffered = () => t.daemon.http.bodyBytesBuffered;

  it('refuses bodies beyond it with 503 and Retry-After while /health answers, and takes them again once the held ones end', async () => {
    const held = Array.from({ length: 4 }, () => holdBody(t, { method: 'POST', path: '/channels', headers: auth(), declared: BODY_LIMIT, sent: 1024 }));
    await waitFor(() => buffered() === 4 * BODY_LIMIT, { what: 'four held bodies charged to the budget' });
    const body = JSON.stringify({ name: 'x'.repeat(BODY_LIMIT - 100) });
    const refused = await Promise.all(Array.from({ length: 8 }, () => t.api('POST', '/channels', { rawBody: body })));
    for (const res of refused) {
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.code).toBe('service_unavailable');
      expect(res.headers.get('retry-after')).toBe('1');
    }
    const chunked = holdBody(t, { method: 'POST', path: '/channels', headers: auth(), declared: null, sent: 100 });
    expect((await chunked.answer).status).toBe(503);
    chunked.abort();
    expect((await t.api('GET', '/health')).status).toBe(200);

    held[0].finish(); // answered (a body of spaces is invalid JSON), and released
    expect((await held[0].answer).status).toBe(400);
    held[1].abort(); // released when the connection is gone
    await waitFor(() => buffered() === 2 * BODY_LIMIT, { what: 'the finished and the aborted body released' });
    const accepted = await Promise.all([1, 2].map(() => t.api('POST', '/channels', { rawBody: body })));
    expect(accepted.map((r) => r.body.code)).toEqual(['validation_failed', 'validation_failed']); // name too long: read and validated
    for (const h of held.slice(2)) h.abort();
    await waitFor(() => buffered() === 0, { what: 'every charge released' });
  });

  it('cannot be set below http.bodyLimit', () => {
    expect(() => loadConfig({ env: {}, overrides: { 'http.bodyLimit': 2 * MiB, 'http.bodyBufferLimit': MiB } })).toThrow(/"http.bodyBufferLimit" must be at least "http.bodyLimit"/);
  });
});
