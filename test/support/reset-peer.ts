/**
 * A TCP peer on loopback that follows a short script and then resets the connection (RST, with
 * socket.resetAndDestroy()), as a crashing server or a middlebox would: right after accepting,
 * when a given command line arrives, or at the first bytes after a given line (the TLS
 * ClientHello after STARTTLS, the message after DATA's 354), or at the first byte received.
 * Lines are CRLF-terminated text;
 * the script answers a line with a reply, with 'reset', or with 'reset-next' (answer nothing,
 * reset when any further byte arrives).
 */
import net from 'node:net';

export type Step = string | 'reset' | { reply: string; then: 'reset-next' };

export interface ResetPeerOptions {
  host: string;
  port?: number;
  /** Sent on accept; 'reset' resets at once. */
  greeting?: string | 'reset';
  /** Answers one received line (without CRLF); undefined: no answer. */
  onLine?: (line: string) => Step | undefined;
  /** Reset at the first byte received (an HTTP request, a TLS ClientHello). */
  resetOnFirstByte?: boolean;
}

export interface ResetPeer {
  host: string;
  port: number;
  /** Connections reset so far (the sentinel tests wait for). */
  resets: number;
  close(): Promise<void>;
}

export async function startResetPeer(o: ResetPeerOptions): Promise<ResetPeer> {
  const sockets = new Set<net.Socket>();
  const peer: ResetPeer = { host: o.host, port: 0, resets: 0, close: async () => undefined };
  const reset = (socket: net.Socket): void => {
    peer.resets++;
    socket.resetAndDestroy();
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (o.greeting === 'reset') return reset(socket);
    if (o.greeting) socket.write(o.greeting);
    let buffered = '';
    let resetNext = o.resetOnFirstByte ?? false;
    socket.on('data', (chunk: Buffer) => {
      if (resetNext) return reset(socket);
      buffered += chunk.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n')) !== -1) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const step = o.onLine?.(line);
        if (step === 'reset') return reset(socket);
        if (typeof step === 'string') socket.write(step);
        else if (step) {
          socket.write(step.reply);
          resetNext = true;
          if (buffered.length > 0) return reset(socket);
        }
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host, () => resolve());
  });
  peer.port = (server.address() as net.AddressInfo).port;
  peer.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return peer;
}

/** An SMTP server (RFC 5321) that resets at the given point of the session. */
export function smtpResetScript(at: 'ehlo' | 'starttls-handshake' | 'data-body'): Pick<ResetPeerOptions, 'greeting' | 'onLine'> {
  return {
    greeting: '220 reset.test ESMTP\r\n',
    onLine: (line) => {
      const verb = line.slice(0, 8).toUpperCase();
      if (verb.startsWith('EHLO') || verb.startsWith('HELO')) return at === 'ehlo' ? 'reset' : `250-reset.test\r\n${at === 'starttls-handshake' ? '250-STARTTLS\r\n' : ''}250 8BITMIME\r\n`;
      if (verb.startsWith('STARTTLS')) return { reply: '220 2.0.0 Ready to start TLS\r\n', then: 'reset-next' };
      if (verb.startsWith('MAIL') || verb.startsWith('RCPT')) return '250 2.1.0 Ok\r\n';
      if (verb.startsWith('DATA')) return { reply: '354 End data with <CR><LF>.<CR><LF>\r\n', then: 'reset-next' };
      if (verb.startsWith('QUIT')) return '221 2.0.0 Bye\r\n';
      return '502 5.5.2 Not implemented\r\n';
    },
  };
}
