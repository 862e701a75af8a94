/**
 * Fuzzing HTTP below the framework: valid requests as bytes, bent by request-level tricks
 * (duplicate Content-Length, chunked plus length, folded headers, bare LF, odd versions and
 * methods) and byte mutations, sent on a raw socket. The contract: no 5xx, errors are problems.
 */
import net from 'node:net';
import fc from 'fast-check';
import { mutateText, textMutation, type FuzzContext, type FuzzStats } from './common.js';

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
