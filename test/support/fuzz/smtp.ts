/**
 * Fuzzing SMTP submission: random command sequences (EHLO/HELO, AUTH PLAIN/LOGIN good and bad,
 * MAIL/RCPT with hostile addresses and parameters, RSET, NOOP, VRFY, garbage, over-long lines,
 * bare LF, pipelining) and malformed MIME after DATA. The contract: every line the server sends
 * is an RFC 5321 reply line, every command gets its reply in time, no internal-error reply
 * (451 4.3.0), and the daemon keeps running.
 */
import fc from 'fast-check';
import { SmtpWire } from '../smtp-wire.js';
import { hostileString, type FuzzContext } from './common.js';
import { restoreFixtures } from './target.js';

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
type Reply = Awaited<ReturnType<SmtpWire['reply']>>;

/** One fuzzed session's connection: sends lines, checks every reply, keeps the transcript. */
class FuzzSession {
  readonly transcript: string[] = [];

  constructor(
    readonly c: FuzzContext,
    readonly wire: SmtpWire,
    private readonly counts: Record<string, number>,
  ) {}

  check(r: Reply, sent: string): string | null {
    this.transcript.push(`> ${sent.slice(0, 120)}`, `< ${r ? r.text.slice(0, 200) : '(closed)'}`);
    if (!r) return null; // the server may close (421, QUIT, too many errors)
    this.counts[String(r.code)] = (this.counts[String(r.code)] ?? 0) + 1;
    if (/ queued as /.test(r.text)) this.counts.queued = (this.counts.queued ?? 0) + 1;
    if (/^451 4\.3\.0/m.test(r.text)) return `internal error reply to ${JSON.stringify(sent.slice(0, 200))}: ${r.text}`;
    return null;
  }

  /** A 354 (a raw DATA line got through) puts the server in data mode: end the message at once. */
  async endDataIf354(r: Reply): Promise<string | null> {
    if (r?.code !== 354) return null;
    this.wire.write('.\r\n');
    return this.check(await this.wire.reply(30_000), '(empty message)');
  }

  async send(line: string, timeoutMs = 10_000): Promise<string | null> {
    if (this.wire.isClosed) return null;
    try {
      const r = await this.wire.cmd(line, timeoutMs);
      return this.check(r, line) ?? (await this.endDataIf354(r));
    } catch (err) {
      return `no reply to ${JSON.stringify(line.slice(0, 200))}: ${String(err)}`;
    }
  }

  async pipeline(lines: string[]): Promise<string | null> {
    this.wire.write(lines.map((l) => `${l}\r\n`).join(''));
    let wrong: string | null = null;
    for (const l of lines) {
      if (wrong || this.wire.isClosed) break;
      try {
        const r = await this.wire.reply();
        wrong = this.check(r, l) ?? (await this.endDataIf354(r));
      } catch (err) {
        wrong = `no reply to pipelined ${l}: ${String(err)}`;
      }
    }
    return wrong;
  }

  async auth(step: Extract<SmtpStep, { kind: 'auth' }>): Promise<string | null> {
    const [user, pass] = credentials(this.c, step);
    if (!step.login) return this.send(`AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString('base64')}`);
    let wrong = await this.send('AUTH LOGIN');
    wrong ??= await this.send(Buffer.from(user).toString('base64'));
    wrong ??= await this.send(Buffer.from(pass).toString('base64'));
    return wrong;
  }

  async data(step: Extract<SmtpStep, { kind: 'data' }>): Promise<string | null> {
    const go = await this.wire.cmd('DATA').catch(() => null);
    const wrong = this.check(go, 'DATA');
    if (wrong || !go || go.code !== 354) return wrong;
    const raw = renderMime(step.message, this.c, step.bareLf).replace(/(^|\n)\./g, '$1..');
    // The end of data is CRLF.CRLF whatever the body's line ends were (RFC 5321 4.1.1.4).
    this.wire.write(`${raw}\r\n.\r\n`);
    try {
      return this.check(await this.wire.reply(30_000), '(end of DATA)');
    } catch (err) {
      return `no reply to the end of DATA: ${String(err)}`;
    }
  }
}

function runStep(s: FuzzSession, step: SmtpStep): Promise<string | null> {
  const c = s.c;
  switch (step.kind) {
    case 'line':
      return s.send(OURS(c, step.text));
    case 'pipeline':
      return s.pipeline(step.lines.map((l) => OURS(c, l)));
    case 'auth':
      return s.auth(step);
    case 'mail':
      return s.send(`MAIL FROM:<${OURS(c, step.addr).replace(/[\r\n]/g, '')}>${step.params}`);
    case 'rcpt':
      return s.send(`RCPT TO:<${OURS(c, step.addr).replace(/[\r\n]/g, '')}>${step.params}`);
    case 'data':
      return s.data(step);
  }
}

/** The good start a session may make before its random steps: EHLO, AUTH, a transaction. */
async function goodStart(s: FuzzSession, steps: number): Promise<string | null> {
  const c = s.c;
  let wrong: string | null = null;
  if (steps >= 1) wrong ??= await s.send('EHLO fuzz.example');
  if (steps >= 2) wrong ??= await s.send(`AUTH PLAIN ${Buffer.from(`\0${c.channelId}\0${c.accountKey}`).toString('base64')}`);
  if (steps >= 3) {
    wrong ??= await s.send(`MAIL FROM:<app@${c.domain}>`);
    wrong ??= await s.send('RCPT TO:<ann@example.net>');
  }
  return wrong;
}

async function smtpSessionRun(c: FuzzContext, session: { goodStart: number; steps: SmtpStep[] }, counts: Record<string, number>): Promise<string | null> {
  let wire: SmtpWire;
  try {
    wire = await SmtpWire.connect(c.d.smtpPort);
  } catch (err) {
    return `connect failed: ${String(err)}`;
  }
  const s = new FuzzSession(c, wire, counts);
  try {
    let wrong = s.check(await wire.reply(), '(connect)');
    wrong ??= await goodStart(s, session.goodStart);
    for (const step of session.steps) {
      if (wrong || wire.isClosed) break;
      wrong = await runStep(s, step);
    }
    if (!wrong && wire.badLines.length > 0) wrong = `lines that are not SMTP replies: ${JSON.stringify(wire.badLines.slice(0, 3))}`;
    return wrong ? `${wrong}\ntranscript:\n${s.transcript.join('\n')}` : null;
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
