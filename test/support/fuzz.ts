/**
 * Fuzzing the daemon's two front doors with fast-check, shared by the quick run in `npm test`
 * (test/e2e/security-fuzz.test.ts) and the long one in `npm run test:soak` (test/soak/fuzz.soak.ts).
 *
 * HTTP: every operation of /openapi.json (public ones included) gets random JSON, mutated valid
 * bodies (fields dropped, retyped, replaced by hostile strings, deep nesting, unknown and
 * prototype keys), broken JSON text and odd content types, with good, foreign, bad or no keys.
 * The contract: no 5xx, and every error is application/problem+json with a catalogue code whose
 * status is the HTTP status and whose requestId is the X-Request-Id header.
 *
 * SMTP: random command sequences (EHLO/HELO, AUTH PLAIN/LOGIN good and bad, MAIL/RCPT with
 * hostile addresses and parameters, RSET, NOOP, VRFY, garbage, over-long lines, bare LF,
 * pipelining) and malformed MIME after DATA. The contract: every line the server sends is an
 * RFC 5321 reply line, every command gets its reply in time, no internal-error reply (451 4.3.0),
 * and the daemon keeps running.
 *
 * Cases run in batches (one fast-check run = one batch sent concurrently), so a failure is
 * shrunk to a small batch and reported with fast-check's seed for replay (FUZZ_SEED).
 */
import net from 'node:net';
import fc from 'fast-check';
import { ERROR_CATALOGUE } from '../../src/domain/errors.js';
import type { ChildDaemon } from './child-daemon.js';
import { SmtpWire } from './smtp-wire.js';

export interface FuzzContext {
  d: ChildDaemon;
  accountKey: string;
  channelKey: string;
  /** A key of another account. */
  foreignKey: string;
  channelId: string;
  foreignChannelId: string;
  domain: string;
  domainId: string;
  messageId: string;
  webhookId: string;
}

export interface FuzzStats {
  cases: number;
  byStatus: Record<string, number>;
}

// ---------------------------------------------------------------- shared value generators

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\r\n',
  '\n.\n',
  '\u0000',
  '\uFEFF',
  '\uD800',
  '%00',
  '%E0%A4%A',
  '%',
  '%0d%0aX-Injected: 1',
  '../../../../etc/passwd',
  '{{constructor.constructor}}',
  '{{#each this}}{{/each}}',
  '{{> partial}}',
  '{{{{raw}}}}',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  'null',
  '-1',
  '1e309',
  'NaN',
  '0x10',
  'a'.repeat(300),
  'é'.repeat(200),
  '😀'.repeat(100),
  'x'.repeat(70_000),
  '=?utf-8?B?AAAA?=',
  'user@example.com',
  '"quoted"@example.com',
  'a@[127.0.0.1]',
  '@a,@b:c@d',
  'user%relay@example.com',
  'bang!path@example.com',
  'http://127.0.0.1:9/',
  'javascript:alert(1)',
  '2024-02-30T25:61:00Z',
  '00000000-0000-0000-0000-000000000000',
  'ZZZZZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZZZZZZZZZ',
];

const KEY_NAMES = [
  'from', 'to', 'cc', 'bcc', 'replyTo', 'subject', 'html', 'text', 'template', 'tracking', 'attachments', 'tags', 'headers',
  'metadata', 'messages', 'data', 'email', 'name', 'content', 'fileName', 'contentType', 'contentId', 'disposition', 'links',
  'opens', 'deliveryType', 'channelId', 'channelIds', 'mailType', 'emails', 'url', 'events', 'enabled', 'additionalHeaders',
  'dkimAlgorithm', 'inlineStyles', 'value', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '',
];

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.emailAddress() },
);

const hostileNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -0, 0.5));

/** JSON values with our field names as keys, hostile strings and numbers as leaves. */
const jsonish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...KEY_NAMES), fc.string({ maxLength: 8 })), tie('value'), { maxKeys: 5 }),
  ),
})).value;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A mutation of a JSON value, applied at the pick-th node in a fixed walk order. */
interface Mutation {
  pick: number;
  kind: 'delete' | 'replace' | 'addKey' | 'wrap' | 'deep' | 'emptyContainer' | 'stringify';
  value: unknown;
  key: string;
  depth: number;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  kind: fc.constantFrom('delete', 'replace', 'replace', 'replace', 'addKey', 'wrap', 'deep', 'emptyContainer', 'stringify'),
  value: jsonish,
  key: fc.oneof(fc.constantFrom(...KEY_NAMES), fc.string({ maxLength: 10 })),
  depth: fc.oneof(fc.integer({ min: 2, max: 64 }), fc.integer({ min: 500, max: 1500 })),
});

/** Every node of v in pre-order (iterative: values may be nested deeper than the stack). */
function nodes(root: Json): Array<{ parent: Json[] | Record<string, Json> | null; key: string | number }> {
  const out: Array<{ parent: any; key: string | number }> = [];
  const todo: Array<{ v: Json; parent: any; key: string | number }> = [{ v: root, parent: null, key: '' }];
  while (todo.length > 0) {
    const { v, parent, key } = todo.pop()!;
    out.push({ parent, key });
    if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) todo.push({ v: v[i], parent: v, key: i });
    else if (v && typeof v === 'object') for (const k of Object.keys(v).reverse()) todo.push({ v: v[k], parent: v, key: k });
  }
  return out;
}

function nest(depth: number, leaf: Json): Json {
  let v: Json = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

/** Applies mutations to a copy; the root may be replaced. */
export function mutate(base: Json, muts: Mutation[]): Json {
  let root: Json = structuredClone(base);
  let deepDone = false;
  for (const m of muts) {
    // One deep nesting per body: stacked ones would only test this file's JSON.stringify.
    if (m.kind === 'deep' && deepDone) continue;
    deepDone ||= m.kind === 'deep';
    const all = nodes(root);
    const { parent, key } = all[m.pick % all.length];
    const get = (): Json => (parent === null ? root : (parent as any)[key]);
    const set = (v: Json | undefined) => {
      if (parent === null) root = v === undefined ? null : v;
      else if (v === undefined) {
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete (parent as any)[key];
      } else (parent as any)[key] = v;
    };
    const current = get();
    switch (m.kind) {
      case 'delete':
        set(undefined);
        break;
      case 'replace':
        set(m.value as Json);
        break;
      case 'addKey':
        if (current && typeof current === 'object' && !Array.isArray(current)) {
          // defineProperty, so "__proto__" becomes an own key, as JSON.parse would make it
          Object.defineProperty(current, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
        } else if (Array.isArray(current)) current.push(m.value as Json);
        break;
      case 'wrap':
        set([current]);
        break;
      case 'deep':
        set(nest(m.depth, current));
        break;
      case 'emptyContainer':
        set(Array.isArray(current) ? [] : {});
        break;
      case 'stringify':
        set(JSON.stringify(current) ?? 'undefined');
        break;
    }
  }
  return root;
}

/** Breaks JSON text: truncation, insertion, deletion, byte flips. */
const textMutation = fc.record({ at: fc.nat(), kind: fc.constantFrom('truncate', 'insert', 'delete', 'flip', 'dup'), text: fc.string({ unit: 'binary', maxLength: 6 }), len: fc.integer({ min: 1, max: 8 }) });

function mutateText(s: string, muts: Array<{ at: number; kind: string; text: string; len: number }>): string {
  for (const m of muts) {
    const at = s.length ? m.at % (s.length + 1) : 0;
    if (m.kind === 'truncate') s = s.slice(0, at);
    else if (m.kind === 'insert') s = s.slice(0, at) + m.text + s.slice(at);
    else if (m.kind === 'delete') s = s.slice(0, at) + s.slice(at + m.len);
    else if (m.kind === 'flip') s = s.slice(0, at) + String.fromCharCode((s.charCodeAt(at) || 0) ^ 0x20) + s.slice(at + 1);
    else s = s.slice(0, at) + s.slice(at, at + m.len).repeat(3) + s.slice(at + m.len);
  }
  return s;
}

// ---------------------------------------------------------------- HTTP

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

/**
 * Puts the fixtures back the way startFuzzTarget made them: fuzzed PATCH requests on the real
 * ids may have turned the channel live or unlinked the domain, after which every send would be
 * refused and the deep paths (render, sign, store) no longer reached.
 */
export async function restoreFixtures(c: FuzzContext): Promise<void> {
  const channel = await c.d.api('PATCH', `/channels/${c.channelId}`, { body: { name: 'fuzz', deliveryType: 'sandbox' } });
  const domain = await c.d.api('PATCH', `/domains/${c.domainId}`, { body: { channelIds: [c.channelId] } });
  if (channel.status !== 200 || domain.status !== 200) throw new Error(`could not restore the fuzz fixtures: ${channel.status} ${domain.status}`);
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
            return `${req.method} ${req.url.slice(0, 200)}: no answer (${String(err)})`;
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

// ---------------------------------------------------------------- raw HTTP

/** Valid requests as bytes: the starting points of the raw mutations. */
function rawBases(c: FuzzContext): string[] {
  const send = JSON.stringify({ from: { email: `app@${c.domain}` }, to: [{ email: 'ann@example.net' }], subject: 's', text: 't' });
  const auth = `Authorization: Bearer ${c.accountKey}\r\n`;
  return [
    'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    `GET /channels?limit=5 HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`,
    `POST /channels HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 15\r\nConnection: close\r\n\r\n{"name":"raw"}\n`,
    `POST /send/transactional HTTP/1.1\r\nHost: x\r\n${auth}X-Service-Channel-Id: ${c.channelId}\r\nContent-Type: application/json\r\nContent-Length: ${send.length}\r\nConnection: close\r\n\r\n${send}`,
    `POST /channels HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nE\r\n{"name":"raw"}\r\n0\r\n\r\n`,
  ];
}

/** Request-level tricks that text mutations rarely find. */
const RAW_TRICKS = [
  (r: string) => r.replace('Content-Length: ', 'Content-Length: 5\r\nContent-Length: '),
  (r: string) => r.replace('Host: x\r\n', 'Host: x\r\nTransfer-Encoding: chunked\r\n'),
  (r: string) => r.replace('Host: x\r\n', 'Host: x\r\n Folded: continuation\r\n'),
  (r: string) => r.replace(/\r\n/g, '\n'),
  (r: string) => r.replace('HTTP/1.1', 'HTTP/1.0'),
  (r: string) => r.replace('HTTP/1.1', 'HTTP/2.0'),
  (r: string) => r.replace('HTTP/1.1', 'HTTP/1.1 extra'),
  (r: string) => r.replace(/^(\w+) \//, '$1 http://127.0.0.1/'),
  (r: string) => r.replace(/^\w+/, 'TRACE'),
  (r: string) => r.replace(/^\w+/, 'get'),
  (r: string) => r.replace('Host: x\r\n', `Host: x\r\nX-Long: ${'a'.repeat(20_000)}\r\n`),
  (r: string) => r.replace('Host: x\r\n', `Host: x\r\n${Array.from({ length: 300 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n`),
  (r: string) => r.replace('Host: x\r\n', 'Host: x\r\nContent-Length: -1\r\n'),
  (r: string) => r.replace('Host: x\r\n', 'Host: x\r\nExpect: 100-continue\r\n'),
  (r: string) => r.replace(/\r\n\r\n/, '\r\n\r\n'.repeat(3)),
  (r: string) => r + r,
  (r: string) => r.replace('\r\n\r\n', '\r\nX-Null: a\u0000b\r\n\r\n'),
];

const rawCase = fc.record({
  base: fc.nat(),
  tricks: fc.array(fc.nat({ max: RAW_TRICKS.length - 1 }), { maxLength: 2 }),
  muts: fc.array(textMutation, { maxLength: 3 }),
});

/** Sends bytes, half-closes, and collects the answer until the server closes or timeoutMs. */
export function rawExchange(port: number, bytes: Buffer, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    let buf = '';
    const sock = net.connect({ port, host: '127.0.0.1' }, () => {
      sock.write(bytes);
      sock.end();
    });
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => (buf += d));
    sock.on('error', () => undefined);
    sock.on('close', () => resolve(buf));
    setTimeout(() => {
      sock.destroy();
      resolve(buf);
    }, timeoutMs).unref();
  });
}

/** Every response in the answer: no 5xx, and errors are problems. */
export function checkRaw(answer: string): string | null {
  // A status line, its header lines, the empty line (an interim 100 has no headers).
  for (const m of answer.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n((?:[^\r\n]+\r\n)*)\r\n/g)) {
    const status = Number(m[1]);
    const type = /^content-type:\s*([^\r\n]*)/im.exec(m[2])?.[1] ?? '';
    if (status >= 500) return `status ${status}`;
    if (status >= 400 && !type.startsWith('application/problem+json')) return `status ${status} with content-type "${type}"`;
  }
  return null;
}

export async function fuzzRawHttp(o: { ctx: FuzzContext; cases: number; batch?: number; seed?: number }): Promise<FuzzStats> {
  const bases = rawBases(o.ctx);
  const batch = o.batch ?? 16;
  const stats: FuzzStats = { cases: 0, byStatus: {} };
  await fc.assert(
    fc.asyncProperty(fc.array(rawCase, { minLength: batch, maxLength: batch }), async (cases) => {
      const problems = await Promise.all(
        cases.map(async (k) => {
          let text = bases[k.base % bases.length];
          for (const t of k.tricks) text = RAW_TRICKS[t](text);
          text = mutateText(text, k.muts);
          const answer = await rawExchange(o.ctx.d.httpPort, Buffer.from(text, 'latin1'), 3000);
          const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 'none';
          stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
          const wrong = checkRaw(answer);
          return wrong && `${JSON.stringify(text.slice(0, 300))}: ${wrong}: ${JSON.stringify(answer.slice(0, 300))}`;
        }),
      );
      stats.cases += cases.length;
      const bad = problems.filter(Boolean) as string[];
      if (!o.ctx.d.alive) bad.push(`the daemon exited: ${JSON.stringify(o.ctx.d.exitStatus)}\n${o.ctx.d.stderr.slice(-2000)}`);
      if (bad.length > 0) throw new Error(bad.join('\n'));
    }),
    { numRuns: Math.ceil(o.cases / batch), seed: o.seed, endOnFailure: true },
  );
  return stats;
}

// ---------------------------------------------------------------- SMTP

type SmtpStep =
  | { kind: 'line'; text: string }
  | { kind: 'auth'; good: boolean; user: 'channel' | 'api' | 'random'; text: string; login: boolean }
  | { kind: 'mail'; addr: string; params: string }
  | { kind: 'rcpt'; addr: string; params: string }
  | { kind: 'data'; message: MimeSpec; bareLf: boolean }
  | { kind: 'pipeline'; lines: string[] };

interface MimeSpec {
  headers: Array<[string, string]>;
  from: 'ours' | 'foreign' | 'none' | 'broken';
  body: string;
  multipart: null | { boundary: string; parts: Array<{ headers: Array<[string, string]>; body: string }>; close: boolean };
}

const smtpAddress = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('OURS', 'ann@example.net', 'bob@example.org') },
  { weight: 2, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.emailAddress() },
  { weight: 1, arbitrary: fc.constantFrom('', 'postmaster', '<>', '@a,@b:c@d', 'a%b@OURSDOMAIN', 'x!y@OURSDOMAIN', '"a b"@example.net', 'a@[127.0.0.1]', 'a@b@c', 'OURS OURS', `${'a'.repeat(70)}@example.net`, `a@${'b'.repeat(260)}.com`) },
);

const smtpParams = fc.oneof(
  { weight: 4, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom(' SIZE=100', ' SIZE=999999999999', ' SIZE=-1', ' SIZE=abc', ' BODY=8BITMIME', ' BODY=BINARYMIME', ' SMTPUTF8', ' RET=FULL ENVID=x+0D+0Ay', ' NOTIFY=SUCCESS,FAILURE ORCPT=rfc822;a@b', ' AUTH=<>', ' X=Y=Z', ' =', ' SIZE=1 SIZE=2') },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => ` ${s}`) },
);

const headerName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('Subject', 'To', 'Cc', 'Bcc', 'Reply-To', 'Message-ID', 'Date', 'X-Tags', 'X-Metadata', 'Content-Type', 'Content-Transfer-Encoding', 'MIME-Version', 'DKIM-Signature', 'Received', 'Sender', 'List-Unsubscribe', 'Content-Disposition') },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 20 }) },
);

const headerValue = fc.oneof(
  { weight: 2, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom('a, b, c', 'x'.repeat(2000), '{"k":"v"}', '{"k":', '[1,2]', '{"a":{"b":1}}', '{"k":"line\\r\\nbreak"}', 'multipart/mixed', 'multipart/mixed; boundary=', 'multipart/alternative; boundary="b"', 'text/plain; charset=unknown-8bit', 'text/html; charset="utf-7"', 'base64', 'quoted-printable', 'x-uuencode', '=?utf-8?Q?=E2=82?=', '=?bogus?X?zz?=', '<a@b>', '<>', 'Mon, 99 Foo 2024 99:99:99 +9999', 'undisclosed-recipients:;', '"Ann" <ann@example.net>, bob@', 'attachment; filename="../../x.exe"') },
);

const mimeSpec: fc.Arbitrary<MimeSpec> = fc.record({
  headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 }),
  from: fc.constantFrom('ours', 'ours', 'ours', 'foreign', 'none', 'broken'),
  body: fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom('', '.', '..', '\r\n.\r\n', 'x'.repeat(5000), '=ZZ=\r\n=', 'AAA=====', `${'y'.repeat(1200)}\r\n`)),
  multipart: fc.option(
    fc.record({
      boundary: fc.oneof(fc.constantFrom('b', '', ' ', '--', 'a'.repeat(100)), fc.string({ unit: 'grapheme-ascii', maxLength: 12 })),
      parts: fc.array(fc.record({ headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 3 }), body: fc.string({ maxLength: 100 }) }), { maxLength: 4 }),
      close: fc.boolean(),
    }),
    { freq: 2 },
  ),
});

const smtpStep: fc.Arbitrary<SmtpStep> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('EHLO client.example', 'HELO client.example', 'EHLO', 'RSET', 'NOOP', 'VRFY ann', 'EXPN list', 'HELP', 'ETRN x', 'BDAT 10 LAST', 'TURN', 'STARTTLS x', 'DATA', 'AUTH', 'AUTH CRAM-MD5', 'AUTH XOAUTH2 dGVzdA==', 'AUTH PLAIN =', 'MAIL', 'RCPT', 'MAIL FROM:', 'RCPT TO:', 'quit now').map((text) => ({ kind: 'line' as const, text })) },
  { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), fc.constantFrom('x'.repeat(2000), 'EHLO ' + 'a'.repeat(1500), 'MAIL FROM:<' + 'a'.repeat(600) + '@example.net>', '\u0000\u0001\u0002', '')).map((text) => ({ kind: 'line' as const, text: text.replace(/[\r\n]/g, ' ') })) },
  { weight: 2, arbitrary: fc.record({ good: fc.boolean(), user: fc.constantFrom('channel' as const, 'api' as const, 'random' as const), text: hostileString, login: fc.boolean() }).map((a) => ({ kind: 'auth' as const, ...a })) },
  { weight: 3, arbitrary: fc.record({ addr: smtpAddress, params: smtpParams }).map((a) => ({ kind: 'mail' as const, ...a })) },
  { weight: 3, arbitrary: fc.record({ addr: smtpAddress, params: smtpParams }).map((a) => ({ kind: 'rcpt' as const, ...a })) },
  { weight: 3, arbitrary: fc.record({ message: mimeSpec, bareLf: fc.boolean() }).map((a) => ({ kind: 'data' as const, ...a })) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom('NOOP', 'RSET', 'MAIL FROM:<OURS>', 'RCPT TO:<ann@example.net>', 'VRFY x'), { minLength: 2, maxLength: 5 }).map((lines) => ({ kind: 'pipeline' as const, lines })) },
);

/** A session: usually a good start (EHLO + good AUTH + MAIL + RCPT) so the deep states are reached. */
const smtpSession = fc.record({
  goodStart: fc.constantFrom(0, 1, 2, 2, 3, 3, 3),
  steps: fc.array(smtpStep, { minLength: 1, maxLength: 8 }),
});

function renderMime(m: MimeSpec, c: FuzzContext, bareLf: boolean): string {
  const eol = bareLf ? '\n' : '\r\n';
  const lines: string[] = [];
  if (m.from === 'ours') lines.push(`From: App <app@${c.domain}>`);
  else if (m.from === 'foreign') lines.push('From: spoof@evil.example');
  else if (m.from === 'broken') lines.push('From: <<app@' + c.domain);
  for (const [k, v] of m.headers) lines.push(`${k}: ${v.replace(/[\r\n]/g, ' ')}`);
  if (m.multipart) lines.push(`Content-Type: multipart/mixed; boundary="${m.multipart.boundary}"`);
  let body = m.body;
  if (m.multipart) {
    body = m.multipart.parts.map((p) => `--${m.multipart!.boundary}${eol}${p.headers.map(([k, v]) => `${k}: ${v.replace(/[\r\n]/g, ' ')}`).join(eol)}${eol}${eol}${p.body}`).join(eol) + (m.multipart.close ? `${eol}--${m.multipart.boundary}--${eol}` : '');
  }
  return lines.join(eol) + eol + eol + body.replace(/\r?\n/g, eol);
}

function credentials(c: FuzzContext, a: Extract<SmtpStep, { kind: 'auth' }>): [string, string] {
  const user = a.user === 'channel' ? c.channelId : a.user === 'api' ? 'api' : a.text;
  const pass = a.good ? (a.user === 'api' ? c.channelKey : c.accountKey) : a.text;
  return [user, pass];
}

const OURS = (c: FuzzContext, s: string) => s.replace(/OURSDOMAIN/g, c.domain).replace(/OURS/g, `app@${c.domain}`);

/** Runs one session; returns what is wrong, or null. */
async function smtpSessionRun(c: FuzzContext, session: { goodStart: number; steps: SmtpStep[] }, counts: Record<string, number>): Promise<string | null> {
  let wire: SmtpWire;
  try {
    wire = await SmtpWire.connect(c.d.smtpPort);
  } catch (err) {
    return `connect failed: ${String(err)}`;
  }
  const transcript: string[] = [];
  const check = (r: Awaited<ReturnType<SmtpWire['reply']>>, sent: string): string | null => {
    transcript.push(`> ${sent.slice(0, 120)}`, `< ${r ? r.text.slice(0, 200) : '(closed)'}`);
    if (!r) return null; // the server may close (421, QUIT, too many errors)
    counts[String(r.code)] = (counts[String(r.code)] ?? 0) + 1;
    if (/ queued as /.test(r.text)) counts.queued = (counts.queued ?? 0) + 1;
    if (/^451 4\.3\.0/m.test(r.text)) return `internal error reply to ${JSON.stringify(sent.slice(0, 200))}: ${r.text}`;
    return null;
  };
  /** A 354 (a raw DATA line got through) puts the server in data mode: end the message at once. */
  const endDataIf354 = async (r: Awaited<ReturnType<SmtpWire['reply']>>): Promise<string | null> => {
    if (r?.code !== 354) return null;
    wire.write('.\r\n');
    return check(await wire.reply(30_000), '(empty message)');
  };
  const send = async (line: string, timeoutMs = 10_000): Promise<string | null> => {
    if (wire.isClosed) return null;
    try {
      const r = await wire.cmd(line, timeoutMs);
      return check(r, line) ?? (await endDataIf354(r));
    } catch (err) {
      return `no reply to ${JSON.stringify(line.slice(0, 200))}: ${String(err)}`;
    }
  };
  try {
    const greeting = await wire.reply();
    let wrong = check(greeting, '(connect)');
    if (session.goodStart >= 1) wrong ??= await send('EHLO fuzz.example');
    if (session.goodStart >= 2) wrong ??= await send(`AUTH PLAIN ${Buffer.from(`\0${c.channelId}\0${c.accountKey}`).toString('base64')}`);
    if (session.goodStart >= 3) {
      wrong ??= await send(`MAIL FROM:<app@${c.domain}>`);
      wrong ??= await send('RCPT TO:<ann@example.net>');
    }
    for (const step of session.steps) {
      if (wrong || wire.isClosed) break;
      switch (step.kind) {
        case 'line':
          wrong = await send(OURS(c, step.text));
          break;
        case 'pipeline': {
          const lines = step.lines.map((l) => OURS(c, l));
          wire.write(lines.map((l) => `${l}\r\n`).join(''));
          for (const l of lines) {
            if (wrong || wire.isClosed) break;
            try {
              const r = await wire.reply();
              wrong = check(r, l) ?? (await endDataIf354(r));
            } catch (err) {
              wrong = `no reply to pipelined ${l}: ${String(err)}`;
            }
          }
          break;
        }
        case 'auth': {
          const [user, pass] = credentials(c, step);
          if (step.login) {
            wrong = await send('AUTH LOGIN');
            wrong ??= await send(Buffer.from(user).toString('base64'));
            wrong ??= await send(Buffer.from(pass).toString('base64'));
          } else {
            wrong = await send(`AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString('base64')}`);
          }
          break;
        }
        case 'mail':
          wrong = await send(`MAIL FROM:<${OURS(c, step.addr).replace(/[\r\n]/g, '')}>${step.params}`);
          break;
        case 'rcpt':
          wrong = await send(`RCPT TO:<${OURS(c, step.addr).replace(/[\r\n]/g, '')}>${step.params}`);
          break;
        case 'data': {
          const go = await wire.cmd('DATA').catch(() => null);
          wrong = check(go, 'DATA');
          if (wrong || !go || go.code !== 354) break;
          const raw = renderMime(step.message, c, step.bareLf).replace(/(^|\n)\./g, '$1..');
          // The end of data is CRLF.CRLF whatever the body's line ends were (RFC 5321 4.1.1.4).
          wire.write(`${raw}\r\n.\r\n`);
          try {
            wrong = check(await wire.reply(30_000), '(end of DATA)');
          } catch (err) {
            wrong = `no reply to the end of DATA: ${String(err)}`;
          }
          break;
        }
      }
    }
    if (!wrong && wire.badLines.length > 0) wrong = `lines that are not SMTP replies: ${JSON.stringify(wire.badLines.slice(0, 3))}`;
    return wrong ? `${wrong}\ntranscript:\n${transcript.join('\n')}` : null;
  } finally {
    await wire.quit().catch(() => undefined);
  }
}

export async function fuzzSmtp(o: { ctx: FuzzContext; sessions: number; batch?: number; seed?: number; progress?: (done: number, counts: Record<string, number>) => void }): Promise<{ sessions: number; replies: Record<string, number> }> {
  const batch = o.batch ?? 8;
  const counts: Record<string, number> = {};
  let done = 0;
  let lastReport = Date.now();
  await restoreFixtures(o.ctx);
  await fc.assert(
    fc.asyncProperty(fc.array(smtpSession, { minLength: batch, maxLength: batch }), async (sessions) => {
      const problems = await Promise.all(sessions.map((s) => smtpSessionRun(o.ctx, s, counts)));
      done += sessions.length;
      if (o.progress && Date.now() - lastReport > 5000) {
        lastReport = Date.now();
        o.progress(done, counts);
      }
      const bad = problems.filter(Boolean) as string[];
      if (!o.ctx.d.alive) bad.push(`the daemon exited: ${JSON.stringify(o.ctx.d.exitStatus)}\n${o.ctx.d.stderr.slice(-2000)}`);
      if (bad.length > 0) throw new Error(bad.join('\n\n'));
    }),
    { numRuns: Math.ceil(o.sessions / batch), seed: o.seed, endOnFailure: true },
  );
  return { sessions: done, replies: counts };
}

/** Log lines at level error (50) or above: an unexpected fault the fuzzing caused. */
export function errorLogLines(log: string): string[] {
  return log.split('\n').filter((l) => /"level":(5\d|60)/.test(l));
}

// ---------------------------------------------------------------- target

/**
 * Starts a daemon for fuzzing (SMTP on, delivery off, limits that fuzzing would trip raised)
 * with a sandbox channel, a linked domain, a channel key, a webhook, a sent message and a
 * second account whose channel serves as the foreign resource.
 */
export async function startFuzzTarget(dnsAddress: string, env: Record<string, string> = {}): Promise<FuzzContext> {
  const { ChildDaemon } = await import('./child-daemon.js');
  const { runCli } = await import('./cli.js');
  const d = new ChildDaemon({
    env: {
      POSTRIDER_SMTP_ENABLED: 'true',
      POSTRIDER_DNS_SERVERS: dnsAddress,
      POSTRIDER_API_RATE_LIMIT: '1000000',
      POSTRIDER_SMTP_AUTH_FAILURE_LIMIT: '10000',
      POSTRIDER_SMTP_AUTH_FAILURES_PER_ADDRESS: '1000000',
      POSTRIDER_WEBHOOKS_ALLOW_HTTP: 'true',
      POSTRIDER_WEBHOOKS_ALLOW_PRIVATE: 'true',
      POSTRIDER_WORKERS_THREADS: '1',
      ...env,
    },
  });
  await d.start();
  const cli = async (args: string[]) => {
    const r = await runCli([...args, '--json'], { POSTRIDER_DATA_DIR: d.dataDir });
    if (r.code !== 0) throw new Error(`postrider ${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  const accountKey = d.apiKey;
  const channel = await d.api('POST', '/channels', { body: { name: 'fuzz', deliveryType: 'sandbox' } });
  const domain = `fuzz-${Math.random().toString(36).slice(2, 8)}.com`;
  const dom = await d.api('POST', '/domains', { body: { name: domain, channelIds: [channel.body.id] } });
  const [account] = await cli(['accounts', 'list']);
  const channelKey = (await cli(['keys', 'create', '--account', account.id, '--channel', channel.body.id])).token;
  const other = await cli(['accounts', 'create', '--name', 'foreign', '--state', 'active']);
  const foreignKey = (await cli(['keys', 'create', '--account', other.id])).token;
  const foreignChannel = await d.api('POST', '/channels', { key: foreignKey, body: { name: 'theirs' } });
  const hook = await d.api('POST', '/webhooks', { body: { url: 'http://127.0.0.1:9/hook', events: ['complained'], channelId: channel.body.id } });
  const sent = await d.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': channel.body.id },
    body: { from: { email: `app@${domain}` }, to: [{ email: 'ann@example.net' }], subject: 's', text: 't' },
  });
  for (const [what, r] of Object.entries({ channel, dom, foreignChannel, hook, sent })) {
    if (r.status !== 200) throw new Error(`fuzz target setup: ${what} answered ${r.status} ${JSON.stringify(r.body)}`);
  }
  return {
    d,
    accountKey,
    channelKey,
    foreignKey,
    channelId: channel.body.id,
    foreignChannelId: foreignChannel.body.id,
    domain,
    domainId: dom.body.id,
    messageId: sent.body.messageId,
    webhookId: hook.body.id,
  };
}
