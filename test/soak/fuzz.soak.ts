/**
 * The long fuzzing run: at least 100,000 random and mutated HTTP requests over every endpoint
 * (plus 20,000 malformed raw HTTP requests) and 10,000 random SMTP sessions with malformed MIME
 * against one daemon (child process).
 * No 5xx, every error a problem+json, every SMTP line a reply and no internal-error reply, no
 * crash, no error in the log. SOAK_FUZZ_HTTP / SOAK_FUZZ_RAW / SOAK_FUZZ_SMTP change the counts,
 * FUZZ_SEED replays a run (fast-check prints the seed of a failure).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import type { FuzzContext } from '../support/fuzz/common.js';
import { fuzzHttp } from '../support/fuzz/http.js';
import { fuzzRawHttp } from '../support/fuzz/raw-http.js';
import { fuzzSmtp } from '../support/fuzz/smtp.js';
import { errorLogLines, startFuzzTarget } from '../support/fuzz/target.js';

const HTTP_CASES = Number(process.env.SOAK_FUZZ_HTTP ?? 100_000);
const SMTP_SESSIONS = Number(process.env.SOAK_FUZZ_SMTP ?? 10_000);
const RAW_CASES = Number(process.env.SOAK_FUZZ_RAW ?? 20_000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;

let dns: TestDns;
let ctx: FuzzContext;

beforeAll(async () => {
  dns = await startDnsServer();
  ctx = await startFuzzTarget(dns.address);
  console.log(`[fuzz] seed ${SEED} (FUZZ_SEED=${SEED} replays this run)`);
});

afterAll(async () => {
  await ctx?.d.close();
  await dns?.close();
});

describe('fuzzing soak', () => {
  it(`answers ${HTTP_CASES} random and mutated HTTP requests without a 5xx, every error a problem+json`, async () => {
    const started = Date.now();
    const stats = await fuzzHttp({
      ctx,
      cases: HTTP_CASES,
      seed: SEED,
      progress: (done, s) => console.log(`[fuzz http] ${done}/${HTTP_CASES} ${Math.round((done * 1000) / (Date.now() - started))}/s statuses ${JSON.stringify(s.byStatus)}`),
    });
    console.log(`[fuzz http] done: ${stats.cases} requests in ${Math.round((Date.now() - started) / 1000)} s, statuses ${JSON.stringify(stats.byStatus)}`);
    expect(stats.cases).toBeGreaterThanOrEqual(HTTP_CASES);
    expect(Object.keys(stats.byStatus).filter((s) => Number(s) >= 500)).toEqual([]);
    expect(ctx.d.alive).toBe(true);
  });

  it(`answers ${RAW_CASES} malformed raw HTTP requests without a 5xx, every error a problem+json`, async () => {
    const started = Date.now();
    const stats = await fuzzRawHttp({ ctx, cases: RAW_CASES, seed: SEED });
    console.log(`[fuzz raw http] done: ${stats.cases} requests in ${Math.round((Date.now() - started) / 1000)} s, statuses ${JSON.stringify(stats.byStatus)}`);
    expect(stats.cases).toBeGreaterThanOrEqual(RAW_CASES);
    expect(ctx.d.alive).toBe(true);
  });

  it(`answers ${SMTP_SESSIONS} random SMTP sessions with proper replies and no internal error`, async () => {
    const started = Date.now();
    const result = await fuzzSmtp({
      ctx,
      sessions: SMTP_SESSIONS,
      seed: SEED,
      progress: (done, counts) => console.log(`[fuzz smtp] ${done}/${SMTP_SESSIONS} sessions, replies ${JSON.stringify(counts)}`),
    });
    console.log(`[fuzz smtp] done: ${result.sessions} sessions in ${Math.round((Date.now() - started) / 1000)} s, replies ${JSON.stringify(result.replies)}`);
    expect(result.sessions).toBeGreaterThanOrEqual(SMTP_SESSIONS);
    // The sessions got as far as storing messages, malformed MIME included.
    expect(result.replies.queued ?? 0).toBeGreaterThan(SMTP_SESSIONS / 100);
    expect(ctx.d.alive).toBe(true);
  });

  it('logged no error while being fuzzed', () => {
    expect(errorLogLines(ctx.d.stdout).slice(0, 5)).toEqual([]);
  });
});
