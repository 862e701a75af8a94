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
