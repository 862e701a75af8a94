/**
 * A quick fuzzing round on every run of the suite (the long one is `npm run test:soak`):
 * random and mutated JSON on every endpoint, malformed raw HTTP, random SMTP sessions with
 * malformed MIME.
 * No 5xx, every error a problem+json, every SMTP line a reply, no crash. See test/support/fuzz/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import type { FuzzContext } from '../support/fuzz/common.js';
import { fuzzHttp } from '../support/fuzz/http.js';
import { checkRaw, fuzzRawHttp, rawExchange } from '../support/fuzz/raw-http.js';
import { fuzzSmtp } from '../support/fuzz/smtp.js';
import { errorLogLines, startFuzzTarget } from '../support/fuzz/target.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

let dns: TestDns;
let ctx: FuzzContext;

beforeAll(async () => {
  dns = await startDnsServer();
  ctx = await startFuzzTarget(dns.address);
}, 60_000);

afterAll(async () => {
  await ctx?.d.close();
  await dns?.close();
});

describe('requests that never reach a route', () => {
  it('are answered with a problem, not with the HTTP stack\'s own body', async () => {
    const cases: Record<string, string> = {
      'not HTTP': 'GARBAGE\r\n\r\n',
      'a header line without a colon': 'GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      'an invalid Content-Length': 'POST /channels HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      'headers over the size limit': `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`,
      'HTTP/1.1 without Host': 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n',
      'an unknown expectation': 'GET /nope HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nConnection: close\r\n\r\n',
      'a path parameter over the length limit': `GET /channels/${'a'.repeat(500)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      'broken %-encoding in the path': 'GET /channels/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    };
    for (const [what, request] of Object.entries(cases)) {
      const answer = await rawExchange(ctx.d.httpPort, Buffer.from(request, 'latin1'), 3000);
      expect(answer, what).toMatch(/^HTTP\/1\.1 4\d\d /);
      expect(checkRaw(answer), `${what}: ${answer.slice(0, 300)}`).toBeNull();
      expect(answer, what).toMatch(/"code":"[a-z_]+"/);
    }
  });
});

describe('deeply nested bodies', () => {
  const nest = (depth: number): unknown => {
    let v: unknown = 'x';
    for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
    return v;
  };
  const bodies = (data: unknown): Record<string, unknown> => ({
    '/send/broadcast': { from: { email: `app@${ctx.domain}` }, template: { subject: 'Hi', text: 'Hi {{name}}' }, messages: [{ to: [{ email: 'ann@example.net' }], data: { name: data } }] },
    '/send/transactional': { from: { email: `app@${ctx.domain}` }, to: [{ email: 'ann@example.net' }], template: { subject: 'Hi', text: 'Hi', data: { name: data } } },
    '/channels': { name: 'deep', tracking: data },
  });

  it('are refused with 422 max_depth at the deep value (a broadcast entry 1,500 levels deep was a 500)', async () => {
    for (const [path, body] of Object.entries(bodies(nest(1500)))) {
      const res = await ctx.d.api('POST', path, { headers: { 'x-service-channel-id': ctx.channelId }, body });
      expect(res.status, `${path}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(422);
      expect(Object.values(res.body.errors).flat()).toContainEqual(expect.objectContaining({ code: 'max_depth' }));
    }
  });

  it('still accepts template data nested a reasonable depth', async () => {
    for (const [path, body] of Object.entries(bodies(nest(20))).filter(([p]) => p.startsWith('/send'))) {
      const res = await ctx.d.api('POST', path, { headers: { 'x-service-channel-id': ctx.channelId }, body });
      expect(res.status, `${path}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
    }
  });
});

describe('fuzzing (quick round)', () => {
  it('answers 1,000 random and mutated HTTP requests without a 5xx, every error a problem+json', async () => {
    const stats = await fuzzHttp({ ctx, cases: 1000, seed: SEED });
    expect(stats.cases).toBeGreaterThanOrEqual(1000);
    expect(ctx.d.alive).toBe(true);
  }, 120_000);

  it('answers 300 malformed raw HTTP requests without a 5xx, every error a problem+json', async () => {
    const stats = await fuzzRawHttp({ ctx, cases: 300, seed: SEED });
    expect(stats.cases).toBeGreaterThanOrEqual(300);
    expect(ctx.d.alive).toBe(true);
  }, 120_000);

  it('answers 100 random SMTP sessions with proper replies and no internal error', async () => {
    const result = await fuzzSmtp({ ctx, sessions: 100, seed: SEED });
    expect(result.sessions).toBeGreaterThanOrEqual(100);
    expect(ctx.d.alive).toBe(true);
  }, 120_000);

  it('logged no error while being fuzzed', () => {
    expect(errorLogLines(ctx.d.stdout).slice(0, 5)).toEqual([]);
  });
});
