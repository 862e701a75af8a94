/**
 * A lingering close (RFC 9112 §9.6) for an answer sent before the request's body was read:
 * Fastify answers a body over the route's limit (413) at once, with `Connection: close`, and
 * Node then closes the socket as soon as the answer is written. Closing a socket with unread
 * data makes the kernel send a reset, and a client still writing its body (fetch/undici, as the
 * official SDKs do) gets EPIPE instead of the 413: 3 in 20 DELETEs with a 2 MB body on loopback,
 * and the HTTP fuzzing soak's "no answer".
 *
 * So such a socket ends its side after the answer (FIN), then reads and discards what the client
 * still sends, and is destroyed when the client ends its side, after LINGER_MS, or after
 * LINGER_BYTES, whichever comes first: bounded, so a client cannot keep the server reading.
 */
import type { Socket } from 'node:net';

const LINGER_MS = 2_000;
const LINGER_BYTES = 16 * 1024 * 1024;
const lingering = new WeakSet<Socket>();

/**
 * Makes the server's close of `socket` (Node's http server calls destroySoon() once an answer
 * with Connection: close is written) a lingering one. Idempotent per socket.
 */
export function lingerOnClose(socket: Socket): void {
  if (lingering.has(socket)) return;
  lingering.add(socket);
  socket.destroySoon = function lingeringClose(this: Socket): void {
    if (this.destroyed) return;
    let discarded = 0;
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', () => this.destroy());
    this.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > LINGER_BYTES) this.destroy();
    });
    this.end();
    this.resume();
  };
}
