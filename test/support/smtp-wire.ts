/**
 * A bare SMTP client on a TCP socket for tests that must send exactly the bytes they choose
 * (relay probes, fuzzing): no address checks, no encoding, no dot-stuffing unless asked.
 * Replies are read whole (multi-line replies end at "NNN "), per RFC 5321 4.2.1.
 */
import net from 'node:net';

export interface SmtpReply {
  code: number;
  /** Every line of the reply, without CRLF. */
  lines: string[];
  text: string;
}

/** RFC 5321 4.2: three digits, then a space (last line) or a hyphen (more lines follow). */
export const REPLY_LINE = /^[2-5][0-9][0-9]([ -].*)?$/;

export class SmtpWire {
  private buffer = '';
  private waiters: Array<() => void> = [];
  private closed = false;
  /** Lines that are not valid reply lines (should stay empty). */
  readonly badLines: string[] = [];

  private constructor(readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buffer += d;
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  static connect(port: number, opts: { host?: string; localAddress?: string; timeoutMs?: number } = {}): Promise<SmtpWire> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host: opts.host ?? '127.0.0.1', localAddress: opts.localAddress });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error('SMTP connect timed out'));
      }, opts.timeoutMs ?? 10_000);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(new SmtpWire(socket));
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  /** A client on a socket already open: the TLS socket of a session after STARTTLS, say. */
  static over(socket: net.Socket): SmtpWire {
    return new SmtpWire(socket);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** The next complete reply; null if the server closed the connection first. */
  async reply(timeoutMs = 10_000): Promise<SmtpReply | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lines: string[] = [];
      let rest = this.buffer;
      let done = false;
      for (;;) {
        const eol = rest.indexOf('\r\n');
        if (eol < 0) break;
        const line = rest.slice(0, eol);
        rest = rest.slice(eol + 2);
        if (!REPLY_LINE.test(line)) this.badLines.push(line);
        lines.push(line);
        if (line.length < 4 || line[3] === ' ') {
          done = true;
          break;
        }
      }
      if (done) {
        this.buffer = rest;
        return { code: Number(lines[lines.length - 1].slice(0, 3)), lines, text: lines.join('\n') };
      }
      if (this.closed) return null;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SMTP reply within ${timeoutMs} ms (have: ${JSON.stringify(this.buffer.slice(0, 200))})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  write(data: string | Buffer): void {
    if (!this.closed) this.socket.write(data);
  }

  /** Sends one command line (CRLF added) and reads its reply. */
  async cmd(line: string, timeoutMs?: number): Promise<SmtpReply | null> {
    this.write(`${line}\r\n`);
    return this.reply(timeoutMs);
  }

  /** EHLO, then AUTH PLAIN with these credentials. */
  async login(user: string, pass: string): Promise<SmtpReply | null> {
    await this.reply();
    await this.cmd('EHLO client.example');
    return this.cmd(`AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString('base64')}`);
  }

  /** DATA, then the message (dot-stuffed here, CRLF line ends expected) and the final dot. */
  async data(message: string): Promise<SmtpReply | null> {
    const go = await this.cmd('DATA');
    if (!go || go.code !== 354) return go;
    const body = message.replace(/(^|\r\n)\./g, '$1..');
    this.write(`${body}${body.endsWith('\r\n') ? '' : '\r\n'}.\r\n`);
    return this.reply(30_000);
  }

  close(): void {
    this.socket.destroy();
  }

  /** QUIT politely, then close. */
  async quit(): Promise<void> {
    if (!this.closed) await this.cmd('QUIT', 2000).catch(() => null);
    this.close();
  }
}
