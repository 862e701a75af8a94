/**
 * Where one thread's CPU time went, by part of the work: every sample goes to the innermost
 * frame of its stack that a part of our code claims, or else to the innermost frame a library
 * part claims (so an lmdb put inside appendEventInTxn counts for the event, and the parts do not
 * overlap: they add up to the thread's busy time); each part is shown in ms per unit of work
 * (e.g. per HTTP send).
 *
 *   node bench/lib/profile-parts.mjs DIR|FILE [--per=3500] [--parts=http|smtp|inbound|e2e|worker]
 *
 * DIR: the folder of `node --cpu-prof` files a benchmark kept (BENCH_KEEP_DATA=1); the main
 * thread's profile (thread 0, the first of the process) is read. --per divides the times (the
 * number of requests the profiled run made, warm-up included).
 */
import fs from 'node:fs';
import path from 'node:path';

/**
 * The parts of the HTTP send path: a frame is matched by "functionName file" (file: the path
 * after node_modules/ or dist/), the first part that matches names it. Parts from LIBRARY on
 * claim a sample only when no part before it is on the stack.
 */
const LIBRARY = ['--library--', /^$/];
export const HTTP_PARTS = [
  ['startup (module loading, plugin boot)', /^(Module\._load|startComponent|serveCommand|loadESM|import) |avvio\/|node:internal\/modules\//],
  ['finishing: results written back (storeSignedInTxn)', /^storeSignedInTxn /],
  ['finishing: hand-off and results (finishing.js, piscina)', /dist\/submission\/finishing(-failures)?\.js|^piscina\/|piscina\/dist/],
  ['commit: webhook outbox lookup', /^enqueueWebhookEventsInTxn /],
  ['commit: statistics counters', /^(countEventInTxn|addInTxn) |dist\/store\/(lmdb\/)?stats\.js/],
  ['commit: event record + indexes', /^appendEventInTxn /],
  ['commit: message queue index', /^queueMessageInTxn /],
  ['commit: jobs', /^putJobInTxn /],
  ['commit: unsigned entry', /^putPendingSignatureInTxn /],
  ['commit: event meta flush', /^writeEventLogMeta |^flush dist\/store\/write-scope/],
  ['commit: idempotency', /^putIdempotencyInTxn /],
  ['commit: message record + rest', /^(commitOneInTxn|commitMessages) |dist\/store\/(lmdb\/)?messages\.js/],
  LIBRARY,
  ['commit: lmdb transaction machinery', /lmdb\/write\.js|dist\/store\/(lmdb\/)?env\.js/],
  ['prepare: normalize', /^normalizeBody /],
  ['prepare: sender domain (and key)', /^(senderKey|senderSigningDomain|sendingDomain) /],
  ['prepare: recipients (deny list, suppressions)', /^splitRecipients /],
  ['prepare: engagement', /^(engagementFor|engagementOf) /],
  ['prepare: template / subject', /^(checkTemplate|headerSafe) /],
  ['prepare: size estimate', /^checkedSize /],
  ['prepare: forStorage', /^forStorage /],
  ['prepare: record + rest', /^(prepareMessage|messageRecord) /],
  ['send: account, channel, idempotency', /^(sendingAccount|resolveSendChannel|sendChannel|idempotencyContext|run) dist\/submission|dist\/submission\/(policy|channel|idempotency)\.js/],
  ['send: enqueue / sendOne rest', /dist\/submission\/(transactional|enqueue|submission)\.js|dist\/http\/routes\/send\.js/],
  ['http: auth', /^authenticate |dist\/api-keys\//],
  ['http: rate limit', /dist\/http\/rate-limit\.js|@fastify\/rate-limit/],
  ['http: JSON parse + key check', /dist\/http\/json-body\.js/],
  ['http: schema validation', /^validate fastify\/lib\/validation|^tooDeep |^throwSendSchemaErrors |dist\/http\/send-validation/],
  ['http: request log line', /^onResponseHookIterator |pino\/|sonic-boom\//],
  ['http: response (serialize, write)', /fastify\/lib\/reply\.js|^serialize|fast-json-stringify/],
  ['http: fastify routing, hooks, other', /fastify\/|find-my-way\//],
  ['node http, sockets', /node:_http|node:net|node:internal\/streams|node:internal\/stream_base/],
  ['garbage collector', /^\(garbage collector\) /],
];

/**
 * The parts of an SMTP submission (bench smtp: STARTTLS, AUTH, then RSET, MAIL, RCPT, DATA per
 * message), the same way: our parts first, then the libraries'.
 */
export const SMTP_PARTS = [
  ['startup (module loading, plugin boot)', /^(Module\._load|startComponent|serveCommand|loadESM|import) |avvio\/|node:internal\/modules\//],
  // Innermost frames, wherever they are called from: the syscalls and the collector.
  ['TLS and socket writes (encryption, syscalls)', /^(writeUtf8String|writeBuffer|writev|writeLatin1String) /],
  ['garbage collector', /^\(garbage collector\) /],
  ['finishing: results written back (storeSignedInTxn)', /^storeSignedInTxn /],
  ['finishing: hand-off and results (finishing.js, piscina)', /dist\/submission\/finishing(-failures)?\.js|^piscina\/|piscina\/dist/],
  ['commit: event record + indexes + counters', /^appendEventInTxn /],
  ['commit: message record, body, jobs, rest', /^(commitOneInTxn|commitMessages) |dist\/store\/(lmdb\/)?messages\.js/],
  ['MAIL FROM, From: account and sender domain checks', /^(checkEnvelopeSender|allowedSender|senderSigningDomain|senderKey|sendingAccount|assertMaySend) |^findSendingDomain dist\/submission/],
  ['RCPT TO: deny list, suppressions', /^checkEnvelopeRecipient /],
  ['DATA: activity fields (raw-content.ts)', /dist\/submission\/raw-content\.js/],
  ['DATA: header checks, line lengths, Received, record', /dist\/submission\/(raw|header-senders|line-length|received|x-headers|mailbox-list)\.js|dist\/domain\/raw-headers\.js/],
  ['DATA: enqueue, rest of submission', /dist\/submission\//],
  ['smtp listener (dist/smtp)', /dist\/smtp\//],
  LIBRARY,
  ['commit: lmdb transaction machinery', /lmdb\/write\.js|dist\/store\/(lmdb\/)?env\.js/],
  ['smtp-server: parsing, state, replies', /smtp-server\//],
  ['node streams, sockets, TLS reads', /node:_tls|node:net|node:internal\/streams|node:internal\/stream_base|node:_stream/],
];

/**
 * The parts of inbound mail (bench inbound: SMTP intake and commit, then verification, parsing,
 * JSON, signature and POST), the same way. Much of the work after the 250 resumes from awaits
 * (DNS answers, mailparser's stream events), on stacks without our frames: the library parts
 * claim those by the library that runs.
 */
export const INBOUND_PARTS = [
  ['startup (module loading, plugin boot)', /^(Module\._load|startComponent|serveCommand|loadESM|import) |avvio\/|node:internal\/modules\//],
  ['garbage collector', /^\(garbage collector\) /],
  ['log lines (pino)', /pino\/|sonic-boom\//],
  ['store: inbound messages and routes (commit, claim, record)', /dist\/store\/(lmdb\/)?inbound-/],
  ['verify: our side (verify.ts, DNS bounds)', /dist\/inbound\/(verify|auth-resolver|signature-fields)\.js/],
  ['DNS resolver (cache, queries)', /dist\/dns\//],
  ['parse: parse-received.ts', /dist\/inbound\/parse-received\.js/],
  ['payload: fields, headers, stripped reply, attachments', /dist\/inbound\/(payload|payload-fields|stripped-reply|content-type)\.js/],
  ['JSON + signature (sendSigned)', /^sendSigned |dist\/webhooks\/(request|signature)\.js/],
  ['POST: target check, http client', /dist\/webhooks\/(http-post|pinned-agent|pinned-https|targets)\.js/],
  ['poster: claim loop, attempt, record', /dist\/inbound\/(poster|post-attempt)\.js|dist\/queue\/work-loop\.js/],
  ['SMTP intake: listener, reception, header summary', /dist\/inbound\/(listener|reception|header-summary)\.js|dist\/smtp\//],
  LIBRARY,
  ['mailauth (SPF, DKIM, DMARC, ARC)', /mailauth\//],
  ['mailparser and its decoders (libmime, iconv, linkify, html)', /mailparser\/|libmime\/|libqp\/|libbase64\/|iconv-lite\/|encoding-japanese\/|linkify-it\/|html-to-text\/|htmlparser2\/|punycode|tlds\//],
  ['lmdb transaction machinery', /lmdb\/|dist\/store\//],
  ['smtp-server: parsing, state, replies', /smtp-server\//],
  ['node crypto (hashes, RSA verify, HMAC)', /node:crypto|node:internal\/crypto/],
  ['node sockets and streams (SMTP and HTTP)', /node:_http|node:net|node:internal\/streams|node:internal\/stream_base|node:_stream|node:events/],
];

/**
 * The parts of a message's whole way on the main thread (bench e2e: intake over HTTP or SMTP
 * submission, the commit, the hand-off to the worker threads and their results, then the
 * dispatcher's lease, the attempt over SMTP to the sink and its recorded outcome), the same way
 * as HTTP_PARTS but coarser: one part per stage, so what the intake and delivery benchmarks
 * each measure alone can be set beside what the whole run costs.
 */
export const E2E_PARTS = [
  ['startup (module loading, plugin boot)', /^(Module\._load|startComponent|serveCommand|loadESM|import) |avvio\/|node:internal\/modules\//],
  ['garbage collector', /^\(garbage collector\) /],
  ['log lines (pino)', /pino\/|sonic-boom\//],
  ['finishing: signed results written back (storeSignedInTxn)', /^storeSignedInTxn /],
  ['finishing: hand-off to the pool and results (finishing.js, piscina)', /dist\/submission\/finishing(-failures)?\.js|piscina\//],
  ['delivery: outcome recorded (recordOutcomeInTxn, events, counters)', /^recordOutcomeInTxn |dist\/store\/(lmdb\/)?queue-outcome\.js/],
  ['delivery: lease scans, job and message reads (store)', /dist\/store\/(lmdb\/)?(queue|message-schedule|message-jobs|repos\/queue)\.js|dist\/queue\/delivery-queue\.js/],
  ['delivery: MX location (mx.js, resolver, DNS cache)', /dist\/delivery\/(mx|sites|cluster-sites|address-policy)\.js|dist\/dns\//],
  ['delivery: SMTP client (session, transaction, DATA, replies)', /dist\/delivery\/smtp-[a-z-]+\.js|dist\/delivery\/(connection-cache|tls-[a-z-]+)\.js/],
  ['delivery: dispatcher, picker, gates, pacer, attempt', /dist\/delivery\/|dist\/queue\/|dist\/coordination\//],
  ['intake commit (message, events, counters, jobs)', /^(commitOneInTxn|commitMessages) |dist\/store\/(lmdb\/)?(messages|events|event-index|stats|idempotency)\.js/],
  ['intake: submission (prepare, checks, enqueue)', /dist\/submission\//],
  ['intake: HTTP (routes, auth, validation)', /dist\/http\/|dist\/api-keys\//],
  ['intake: SMTP submission listener', /dist\/smtp\//],
  LIBRARY,
  ['lmdb transaction machinery', /lmdb\//],
  ['nodemailer SMTP client (replies read, DATA written)', /nodemailer\/.*smtp-connection/],
  ['smtp-server (submission listener)', /smtp-server\//],
  ['fastify, routing, JSON', /fastify\/|find-my-way\/|fast-json-stringify|secure-json-parse/],
  ['node TLS', /node:_tls|node:tls/],
  ['node sockets, streams, http', /node:_http|node:net|node:internal\/streams|node:internal\/stream_base|node:_stream|node:events|node:stream/],
  ['node crypto', /node:crypto|node:internal\/crypto/],
  ['other postrider code (no stage on the stack)', /dist\//],
];

/** The parts of a worker thread's time (composition and DKIM signatures after the commit). */
export const WORKER_PARTS = [
  ['garbage collector', /^\(garbage collector\) /],
  ['DKIM: body hash and canonicalization (mailauth)', /mailauth\//],
  ['DKIM: signing (dkim*.js, node:crypto)', /dist\/workers\/dkim[a-z-]*\.js/],
  ['compose: MIME (compose.js, mime-*.js, nodemailer mail-composer)', /dist\/workers\/(compose|mime-[a-z-]+)\.js/],
  ['tasks: finishMany, build (tasks.js, worker.js)', /dist\/workers\//],
  ['piscina: messages between threads', /piscina\//],
  LIBRARY,
  ['nodemailer MIME libraries', /nodemailer\/|libmime|libqp|libbase64/],
  ['node crypto', /node:crypto|node:internal\/crypto/],
  ['thread start-up (module loading)', /node:internal\/modules\/|^(Module\._load|loadESM|import) /],
];

/** Samples whose own frame is a wait, not work: V8's idle; WORKER_IDLE adds piscina's Atomics.wait loop. */
const IDLE = /^\(idle\)/;
export const WORKER_IDLE = /^\(idle\)|^atomicsWaitLoop piscina\//;

const frameName = (n) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist|bench)\//, '$1/')}`;

/**
 * { totalMs, parts: [[part, ms]] } of one .cpuprofile (idle time left out). `windows`: only the
 * samples taken within these [fromUs, toUs] spans of the monotonic clock (a profile's timestamps
 * are CLOCK_MONOTONIC µs, as process.hrtime.bigint() / 1000n in any process on the machine).
 */
export function partsOf(file, parts = HTTP_PARTS, { windows, idle = IDLE } = {}) {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const lib = parts.indexOf(LIBRARY);
  const ours = lib < 0 ? parts : parts.slice(0, lib);
  const libs = lib < 0 ? [] : parts.slice(lib + 1);
  // [innermost part of ours, innermost library part] on the stack of each node.
  const memo = new Map();
  const claims = (id) => {
    if (memo.has(id)) return memo.get(id);
    const name = frameName(byId.get(id));
    const up = parent.has(id) ? claims(parent.get(id)) : [undefined, undefined];
    const c = [ours.find(([, re]) => re.test(name))?.[0] ?? up[0], libs.find(([, re]) => re.test(name))?.[0] ?? up[1]];
    memo.set(id, c);
    return c;
  };
  const claim = (id) => claims(id)[0] ?? claims(id)[1] ?? 'other';
  const out = new Map();
  const selfOf = new Map();
  let total = 0;
  let at = prof.startTime;
  prof.samples.forEach((id, i) => {
    const us = prof.timeDeltas[i] ?? 0;
    at += us;
    if (windows && !windows.some(([from, to]) => at >= from && at <= to)) return;
    if (idle.test(frameName(byId.get(id)))) return;
    total += us;
    const p = claim(id);
    out.set(p, (out.get(p) ?? 0) + us);
    const f = `${p} | ${frameName(byId.get(id))}`;
    selfOf.set(f, (selfOf.get(f) ?? 0) + us);
  });
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]).map(([k, us]) => [k, us / 1000]);
  return { totalMs: total / 1000, parts: sorted(out), frames: sorted(selfOf) };
}

/** The main thread's profile in a --cpu-prof folder: the lowest thread number of the first process. */
export function mainProfile(dir) {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort((a, b) => threadOf(a) - threadOf(b));
  return path.join(dir, files[0]);
}

/** The worker threads' profiles in a --cpu-prof folder: every file but the main thread's. */
export function workerProfiles(dir) {
  const main = mainProfile(dir);
  return fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(dir, f)).filter((f) => f !== main);
}

const threadOf = (f) => Number(/\.(\d+)\.\d+\.cpuprofile$/.exec(f)?.[1] ?? 0);

if (import.meta.url === `file://${process.argv[1]}`) {
  const target = process.argv[2];
  const per = Number(/--per=(\d+)/.exec(process.argv.join(' '))?.[1] ?? 3500);
  const file = fs.statSync(target).isDirectory() ? mainProfile(target) : target;
  const kinds = { http: HTTP_PARTS, smtp: SMTP_PARTS, inbound: INBOUND_PARTS, e2e: E2E_PARTS, worker: WORKER_PARTS };
  const { totalMs, parts, frames } = partsOf(file, kinds[/--parts=(\w+)/.exec(process.argv.join(' '))?.[1] ?? 'http']);
  process.stdout.write(`${path.basename(file)}: ${totalMs.toFixed(0)} ms busy; ms per unit (÷${per})\n`);
  for (const [k, ms] of parts) process.stdout.write(`${(ms / per).toFixed(4).padStart(8)}  ${ms.toFixed(0).padStart(6)} ms  ${k}\n`);
  // --frames=PART: the heaviest frames (self time) of the parts whose name contains PART.
  const which = /--frames=(.+)$/.exec(process.argv.find((a) => a.startsWith('--frames=')) ?? '')?.[1];
  if (which) for (const [k, ms] of frames.filter(([k]) => k.split(' | ')[0].includes(which)).slice(0, 40)) process.stdout.write(`${ms.toFixed(0).padStart(6)} ms  ${k}\n`);
}
