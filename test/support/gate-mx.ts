/**
 * An MX (smtp-server on a loopback address) that holds every DATA reply until the test lets it
 * go: the attempts in flight at it are exactly its held messages, so "at most N sessions at
 * once" is checked by waiting for N held messages (test/integration/delivery-sites.test.ts,
 * test/cluster/site-concurrency.pg.test.ts).
 */
import type { Readable } from 'node:stream';
import { SMTPServer } from 'smtp-server';

export interface GateMx {
  port: number;
  /** Messages whose DATA reply is being held right now. */
  held: number;
  /** Most messages held at the same time. */
  maxHeld: number;
  /** Messages accepted. */
  received: string[];
  /** Replies for the next DATA commands, used one per message, sent at once instead of holding. */
  script: Array<{ code: number; message: string }>;
  /** Lets every held message through (250), and every later one at once. */
  open(): void;
  /** Holds again and forgets what was counted (a new test). */
  reset(): void;
  close(): Promise<void>;
}

/** An MX whose DATA replies wait for open(): the attempts in flight are exactly the held messages. */
export async function startGateMx(address: string): Promise<GateMx> {
  const waiting: Array<() => void> = [];
  let opened = false;
  const mx: GateMx = {
    port: 0,
    held: 0,
    maxHeld: 0,
    received: [],
    script: [],
    open: () => {
      opened = true;
      for (const release of waiting.splice(0)) release();
    },
    reset: () => {
      opened = false;
      Object.assign(mx, { held: 0, maxHeld: 0, received: [], script: [] });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    hideSTARTTLS: true,
    onData(stream: Readable, session, cb) {
      stream.resume();
      stream.on('end', () => {
        const scripted = mx.script.shift();
        if (scripted) return cb(Object.assign(new Error(scripted.message), { responseCode: scripted.code }));
        const accept = () => {
          mx.held--;
          mx.received.push(session.envelope.rcptTo.map((r) => r.address).join(','));
          cb(null, 'OK');
        };
        mx.held++;
        mx.maxHeld = Math.max(mx.maxHeld, mx.held);
        if (opened) accept();
        else waiting.push(accept);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  mx.port = (server.server.address() as { port: number }).port;
  return mx;
}
