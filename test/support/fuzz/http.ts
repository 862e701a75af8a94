/**
 * Fuzzing the HTTP API: every operation of /openapi.json (public ones included) gets random
 * JSON, mutated valid bodies, broken JSON text and odd content types, with good, foreign, bad or
 * no keys. The contract: no 5xx, and every error is application/problem+json with a catalogue
 * code whose status is the HTTP status and whose requestId is the X-Request-Id header.
 */
import fc from 'fast-check';
import { ERROR_CATALOGUE } from '../../../src/domain/errors.js';
import type { ChildDaemon } from '../child-daemon.js';
import { hostileString, mutateText, textMutation, type FuzzContext, type FuzzStats } from './common.js';
import { hostileNumber, jsonish, KEY_NAMES, mutate, mutation, type Json, type Mutation } from './json-mutation.js';
import { restoreFixtures } from './target.js';

export interface Operation {
  method: string;
  /** OpenAPI path, e.g. /channels/{id}. */
  path: string;
  query: string[];
}

/** Every operation the daemon documents, public ones included. */
export async function operationsOf(d: ChildDaemon): Promise<Operation[]> {
  const doc = await d.api('GET', '/openapi.json', { key: null });
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.body.paths as Record<string, Record<string, { parameters?: Array<{ in: string; name: string }> }>>)) {
    for (const [method, op] of Object.entries(ops)) {
      out.push({ method: method.toUpperCase(), path, query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name) });
    }
  }
  return out;
}

/** A valid body per operation: the base that mutations start from. */
function validBody(op: Operation, c: FuzzContext): Json | undefined {
  const from = { email: `app@${c.domain}`, name: 'App' };
  const bodies: Record<string, Json> = {
    'POST /channels': { name: 'fuzzed', deliveryType: 'sandbox', tracking: { links: true, opens: false } },
    'PATCH /channels/{id}': { name: 'renamed', tracking: { opens: true } },
    'POST /domains': { name: 'fuzz-example.com', channelIds: [c.channelId], dkimAlgorithm: 'ed25519' },
    'PATCH /domains/{id}': { channelIds: [c.channelId] },
    'POST /domains/{id}/rotate-key': { dkimAlgorithm: 'ed25519' },
    'POST /send/transactional': {
      from,
      to: [{ email: 'ann@example.net', name: 'Ann' }],
      cc: [{ email: 'cc@example.net' }],
      subject: 'Hello {{x}}',
      text: 'Hi',
      html: '<p>Hi <a href="https://example.com/">link</a></p>',
      tags: ['fuzz'],
      headers: { 'X-Custom': 'v' },
      metadata: { k: 'v', n: 1 },
      attachments: [{ content: 'aGVsbG8=', fileName: 'a.txt', contentType: 'text/plain' }],
      tracking: { links: true, opens: true },
    },
    'POST /send/broadcast': {
      from,
      template: { subject: 'Hi {{name}}', html: '<p>{{name}}</p>', text: 'Hello {{name}}', data: { name: 'all' }, inlineStyles: true },
      messages: [{ to: [{ email: 'ann@example.net' }], data: { name: 'Ann' }, tags: ['b'], metadata: { k: 'v' } }, { to: [{ email: 'bob@example.net' }] }],
      tags: ['fuzz'],
    },
    'POST /suppressions': { channelId: c.channelId, mailType: 'transactional', emails: ['s@example.net'] },
    'POST /suppressions/remove': { channelId: c.channelId, mailType: 'transactional', emails: ['s@example.net'] },
    'POST /webhooks': { url: 'http://127.0.0.1:9/hook', events: ['complained'], channelId: c.channelId, additionalHeaders: [{ name: 'X-T', value: 'v' }] },
    'PATCH /webhooks/{id}': { enabled: false, events: ['complained', 'bounced'] },
  };
  return bodies[`${op.method} ${op.path}`];
}

export interface HttpCase {
  op: number;
  ids: string[];
  query: Array<[string, string]>;
  body:
    | { kind: 'none' }
    | { kind: 'json'; value: unknown }
    | { kind: 'mutated'; muts: Mutation[] }
    | { kind: 'text'; muts: Array<{ at: number; kind: string; text: string; len: number }> }
    | { kind: 'deep'; key: string; depth: number; arrays: boolean };
  contentType: string | null;
  auth: 'account' | 'channel' | 'foreign' | 'none' | 'garbage';
  channelHeader: 'own' | 'foreign' | 'random' | 'none';
  channelHeaderValue: string;
  idempotencyKey: string | null;
}

function httpCase(ops: number): fc.Arbitrary<HttpCase> {
  return fc.record({
    op: fc.nat({ max: ops - 1 }),
    ids: fc.array(fc.oneof(fc.constantFrom('own', 'foreign', 'uuid'), hostileString), { minLength: 1, maxLength: 2 }),
    query: fc.array(fc.tuple(fc.oneof(fc.constantFrom('limit', 'offset', 'name', 'channelIds', 'channelId', 'messageId', 'after', 'startDate', 'endDate', 'recipient', 'subject', 'tags', 'mailType', 'eventTypes', 'deliveryType', 'from', 'to', 'token'), fc.string({ maxLength: 6 })), fc.oneof(hostileString, hostileNumber.map(String))), { maxLength: 3 }),
    body: fc.oneof(
      { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
      { weight: 2, arbitrary: jsonish.map((value) => ({ kind: 'json' as const, value })) },
      { weight: 6, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 4 }).map((muts) => ({ kind: 'mutated' as const, muts })) },
      { weight: 2, arbitrary: fc.array(textMutation, { minLength: 1, maxLength: 3 }).map((muts) => ({ kind: 'text' as const, muts })) },
      // Nesting far deeper than any recursive code could walk, as text (no stack needed here).
      {
        weight: 1,
        arbitrary: fc.record({ key: fc.constantFrom(...KEY_NAMES), depth: fc.integer({ min: 2000, max: 200_000 }), arrays: fc.boolean() }).map((x) => ({ kind: 'deep' as const, ...x })),
      },
    ),
    contentType: fc.oneof(
      { weight: 12, arbitrary: fc.constant('application/json') },
      { weight: 1, arbitrary: fc.constantFrom(null, 'text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/problem+json', 'APPLICATION/JSON', 'application/json; charset=latin1', '*/*') },
    ),
    auth: fc.oneof({ weight: 10, arbitrary: fc.constant('account' as const) }, { weight: 1, arbitrary: fc.constantFrom('channel' as const, 'foreign' as const, 'none' as const, 'garbage' as const) }),
    channelHeader: fc.oneof({ weight: 8, arbitrary: fc.constant('own' as const) }, { weight: 1, arbitrary: fc.constantFrom('foreign' as const, 'random' as const, 'none' as const) }),
    channelHeaderValue: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
    idempotencyKey: fc.option(fc.string({ unit: 'grapheme-ascii', minLength: 0, maxLength: 300 }), { freq: 8 }),
  });
}

const HEADER_SAFE = (s: string) => s.replace(/[^\x20-\x7e]/g, '');

function buildRequest(ops: Operation[], c: FuzzContext, k: HttpCase): { method: string; url: string; headers: Record<string, string>; body?: string } {
  const op = ops[k.op];
  let i = 0;
  const path = op.path.replace(/\{[^}]+\}/g, (param) => {
    const pick = k.ids[i++ % k.ids.length];
    if (pick === 'own') {
      if (op.method === 'DELETE') return crypto.randomUUID(); // keep the fixtures alive
      if (op.path.startsWith('/channels')) return c.channelId;
      if (op.path.startsWith('/domains')) return c.domainId;
      if (op.path.startsWith('/webhooks')) return c.webhookId;
      if (op.path.startsWith('/activity/messages')) return c.messageId;
      if (param === '{code}') return 'validation_failed';
      return c.channelId;
    }
    if (pick === 'foreign') return c.foreignChannelId;
    if (pick === 'uuid') return crypto.randomUUID();
    // Mostly percent-encoded bytes (lone surrogates become U+FFFD); sometimes the raw ASCII
    // text, so broken escapes such as "%E0%A4%A" reach the router as they are.
    const raw = pick.replace(/[^\x21-\x7e]|[/?#]/g, '');
    if (raw && pick.length % 4 === 0) return raw.slice(0, 2000);
    return [...Buffer.from(pick, 'utf8')].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0').toUpperCase()}`)).join('').slice(0, 2000) || '%20';
  });
  const params = new URLSearchParams();
  for (const [key, value] of k.query) params.append(key, value.slice(0, 3000));
  const headers: Record<string, string> = {};
  const key = { account: c.accountKey, channel: c.channelKey, foreign: c.foreignKey, none: null, garbage: 'pr_' + 'x'.repeat(30) }[k.auth];
  if (key) headers.authorization = `Bearer ${key}`;
  const ch = { own: c.channelId, foreign: c.foreignChannelId, random: HEADER_SAFE(k.channelHeaderValue), none: null }[k.channelHeader];
  if (ch !== null && ch !== '') headers['x-service-channel-id'] = ch;
  if (k.idempotencyKey !== null && HEADER_SAFE(k.idempotencyKey) !== '') headers['idempotency-key'] = HEADER_SAFE(k.idempotencyKey);
  let body: string | undefined;
  const base = validBody(op, c) ?? {};
  if (k.body.kind === 'json') body = JSON.stringify(k.body.value) ?? 'null';
  else if (k.body.kind === 'mutated') body = JSON.stringify(mutate(base, k.body.muts)) ?? 'null';
  else if (k.body.kind === 'text') body = mutateText(JSON.stringify(base), k.body.muts);
  else if (k.body.kind === 'deep') {
    const deep = k.body.arrays ? '['.repeat(k.body.depth) + ']'.repeat(k.body.depth) : '{"a":'.repeat(k.body.depth) + '1' + '}'.repeat(k.body.depth);
    const text = JSON.stringify(base);
    body = text === '{}' ? `{${JSON.stringify(k.body.key)}:${deep}}` : text.replace(/\}$/, `,${JSON.stringify(k.body.key)}:${deep}}`);
  }
  if (body !== undefined && k.contentType) headers['content-type'] = k.contentType;
  if (op.method === 'GET' || op.method === 'HEAD') body = undefined;
  const qs = params.toString();
  return { method: op.method, url: c.d.url + path + (qs ? `?${qs}` : ''), headers, body };
}

const CODES = new Set(Object.keys(ERROR_CATALOGUE));

/** Checks one answer against the contract; returns what is wrong, or null. */
async function checkAnswer(res: Response): Promise<string | null> {
  const text = await res.text();
  if (res.status >= 500) return `status ${res.status}: ${text.slice(0, 300)}`;
  if (res.status < 400) return null;
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('application/problem+json')) return `status ${res.status} with content-type "${type}": ${text.slice(0, 200)}`;
  let p: any;
  try {
    p = JSON.parse(text);
  } catch {
    return `status ${res.status}: body is not JSON: ${text.slice(0, 200)}`;
  }
  if (!CODES.has(p.code)) return `unknown code ${JSON.stringify(p.code)}`;
  if (p.status !== res.status) return `problem status ${p.status} != HTTP ${res.status}`;
  if (ERROR_CATALOGUE[p.code as keyof typeof ERROR_CATALOGUE].status !== res.status) return `code ${p.code} with status ${res.status}`;
  if (!p.requestId || p.requestId !== res.headers.get('x-request-id')) return 'requestId missing or not the X-Request-Id header';
  if (typeof p.title !== 'string' || typeof p.detail !== 'string' || typeof p.instance !== 'string' || typeof p.type !== 'string') return 'problem fields missing';
  return null;
}


export async function fuzzHttp(o: { ctx: FuzzContext; cases: number; batch?: number; seed?: number; progress?: (done: number, stats: FuzzStats) => void }): Promise<FuzzStats> {
  const ops = await operationsOf(o.ctx.d);
  const batch = o.batch ?? 16;
  const stats: FuzzStats = { cases: 0, byStatus: {} };
  let lastReport = Date.now();
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(httpCase(ops.length), { minLength: batch, maxLength: batch }), async (cases) => {
      if (runs++ % 50 === 0) await restoreFixtures(o.ctx);
      const problems = await Promise.all(
        cases.map(async (k) => {
          const req = buildRequest(ops, o.ctx, k);
          let res: Response;
          try {
            res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body, signal: AbortSignal.timeout(30_000) });
          } catch (err) {
            return `${req.method} ${req.url.slice(0, 200)}: no answer (${String(err)}${err instanceof Error && err.cause ? `: ${String(err.cause)}` : ""})`;
          }
          stats.byStatus[res.status] = (stats.byStatus[res.status] ?? 0) + 1;
          const wrong = await checkAnswer(res);
          return wrong && `${req.method} ${req.url.slice(0, 200)} body ${String(req.body).slice(0, 300)}: ${wrong}`;
        }),
      );
      stats.cases += cases.length;
      if (o.progress && Date.now() - lastReport > 5000) {
        lastReport = Date.now();
        o.progress(stats.cases, stats);
      }
      const bad = problems.filter(Boolean);
      if (!o.ctx.d.alive) bad.push(`the daemon exited: ${JSON.stringify(o.ctx.d.exitStatus)}\n${o.ctx.d.stderr.slice(-2000)}`);
      if (bad.length > 0) throw new Error(bad.join('\n'));
    }),
    { numRuns: Math.ceil(o.cases / batch), seed: o.seed, endOnFailure: true, interruptAfterTimeLimit: undefined },
  );
  return stats;
}
