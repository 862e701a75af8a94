import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger, REDACT } from '../../src/log/logger.js';

/** The lines a logger writes, without their time (the two loggers write at different instants). */
function capture(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(line.replace(/"time":"[^"]*",/, ''));
      done();
    },
  });
  return { stream, lines };
}

const ERR = Object.assign(new Error('boom'), { token: 't' });

/** Every kind of field the daemon logs: scalars, secrets at each redacted path, errors, arrays, child bindings. */
function writeLines(logger: pino.Logger): void {
  logger.info({ method: 'POST', path: '/send', status: 200, ms: 1.5, keyId: undefined, ok: true, big: 1e21 }, 'request');
  logger.info({ odd: 'quote " backslash \\ line\nbreak \u0001 lone \ud800 surrogate', inf: Infinity, nan: NaN }, 'scalars');
  logger.info({ req: { headers: { authorization: 'Bearer secret', host: 'h' }, password: 'p' }, user: { password: 'p', token: 't', apiKey: 'k', name: 'n' } }, 'secrets');
  logger.info({ key: { privateKeyPem: 'pem', rsaCompanion: { privateKeyPem: 'pem2', publicKeyPem: 'pub' } }, list: [{ token: 'in a list: pino does not look into arrays' }], nothing: null }, 'nested');
  logger.warn({ err: ERR }, 'error');
  const child = logger.child({ component: 'http', reqId: 'r-1', account: { apiKey: 'k', id: 'a' } });
  child.info({ status: 404, cfg: { token: 't', n: 1 } }, 'child line');
  child.child({ level2: 7 }).error('bare message');
}

describe('createLogger', () => {
  it('writes the same lines as pino with the same redaction (scalars skip the redactor, objects are still censored)', () => {
    const ours = capture();
    const reference = capture();
    writeLines(createLogger({ level: 'info', destination: ours.stream }));
    writeLines(pino({ level: 'info', base: { service: 'postrider' }, timestamp: pino.stdTimeFunctions.isoTime, redact: REDACT }, reference.stream));
    expect(ours.lines).toHaveLength(7);
    expect(ours.lines).toEqual(reference.lines);
    const joined = ours.lines.join('\n');
    for (const secret of ['Bearer secret', '"p"', '"t"', '"k"', '"pem"', '"pem2"']) expect(joined).not.toContain(secret);
    expect(joined).toContain('"status":200');
  });
});
