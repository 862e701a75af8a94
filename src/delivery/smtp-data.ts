/**
 * The message after the 354 reply (RFC 5321 4.1.1.4): dot-stuffed (4.5.2), CRLF line ends
 * (2.3.8), then <CRLF>.<CRLF>, written to the socket in one corked write.
 *
 * nodemailer's SMTPConnection pipes the message through its DataStream, a Transform that looks
 * at every byte in JavaScript and writes the final dot in a write of its own: per message a
 * stream pipeline, a byte loop and a second socket write (bench --profile: ~0.1 ms of the main
 * thread per message). A stored message is nearly always canonical already (CRLF only, no line
 * starting with a dot), which native searches confirm without copying; one that is not is framed
 * byte for byte as DataStream frames it. The replies are still nodemailer's to read: this only
 * replaces how the message is written (SMTPConnection 10.x _createSendStream; without it, or
 * for LMTP, nodemailer's own stream is used).
 */
import type SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';

const CR = 0x0d;
const LF = 0x0a;
const DOT = 0x2e;

/** What a message object piped to the DATA sink sees: one write of the whole message. */
export interface DataSink {
  write(body: Buffer): void;
  end(): void;
  outByteCount: number;
}

/** The SMTPConnection internals the fast DATA path stands in for. */
interface SendInternals {
  _createSendStream(callback: (err: Error | null, str?: string) => void): unknown;
  _actionSMTPStream(str: string, callback: (err: Error | null, str?: string) => void): void;
  _responseActions: Array<(str: string) => void>;
  _socket?: { destroyed: boolean; cork(): void; uncork(): void; write(b: Buffer): boolean };
  options: { lmtp?: boolean };
}

/**
 * Makes the connection write a message piped to it (messageSource) in one framed write. False
 * when this nodemailer has no such internals: then a message is streamed the usual way.
 */
export function installDataWriter(conn: SMTPConnection): boolean {
  const c = conn as unknown as SendInternals;
  if (typeof c._createSendStream !== 'function' || typeof c._actionSMTPStream !== 'function' || !Array.isArray(c._responseActions) || c.options?.lmtp) return false;
  c._createSendStream = (callback) => {
    // As nodemailer does: the reply to the final dot settles the send (RFC 5321 4.1.1.4).
    c._responseActions.push((str) => c._actionSMTPStream(str, callback));
    const sink: DataSink = {
      outByteCount: 0,
      write(body) {
        const socket = c._socket;
        if (!socket || socket.destroyed) return;
        const [framed, end] = frame(body);
        socket.cork();
        socket.write(framed);
        socket.write(end);
        socket.uncork();
        sink.outByteCount += framed.length + end.length;
      },
      end() {},
    };
    return sink;
  };
  return true;
}

/**
 * The message as a source nodemailer pipes into its DATA sink once the 354 reply came (it is
 * not a stream: nodemailer just calls pipe). `before` holds it back (the pacer's slot); a
 * session closed meanwhile (abort) has no socket left to write to, and nothing is written.
 */
export function messageSource(body: Buffer, onStart: () => void, before?: () => Promise<void> | undefined): { pipe(sink: DataSink): void } {
  return {
    pipe(sink) {
      const send = () => {
        onStart();
        sink.write(body);
        sink.end();
      };
      const wait = before?.();
      if (wait) void wait.then(send);
      else send();
    },
  };
}

/** The body as sent and the end-of-data line that follows it (same bytes as nodemailer's DataStream). */
export function frame(body: Buffer): [Buffer, Buffer] {
  const out = canonical(body) ? body : stuff(body);
  const last = out.length > 0 ? out[out.length - 1] : -1;
  return [out, last === LF ? END_AFTER_LF : END];
}

const END = Buffer.from('\r\n.\r\n');
const END_AFTER_LF = Buffer.from('.\r\n');

/** Every line end CRLF, no bare CR, no line starting with a dot: sent as it is. */
function canonical(body: Buffer): boolean {
  if (body.length > 0 && body[0] === DOT) return false;
  for (let i = body.indexOf(LF); i !== -1; i = body.indexOf(LF, i + 1)) {
    if (i === 0 || body[i - 1] !== CR || body[i + 1] === DOT) return false;
  }
  for (let i = body.indexOf(CR); i !== -1; i = body.indexOf(CR, i + 1)) {
    if (i + 1 < body.length && body[i + 1] !== LF) return false;
  }
  // A final bare CR: DataStream ends it with LF before the dot line.
  return body.length === 0 || body[body.length - 1] !== CR;
}

/** DataStream's transform and flush in one pass, for a body that is not canonical. */
function stuff(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (let i = 0; i < body.length; i++) {
    const b = body[i];
    const prev = i > 0 ? body[i - 1] : -1;
    let insert: Buffer | undefined;
    // A bare CR becomes CRLF; a dot after it is stuffed too (a receiver that ends lines at a
    // lone CR would otherwise read "\r.\r" as the end of the data: SMTP smuggling).
    if (prev === CR && b !== LF) insert = b === DOT ? LF_DOT : LF_ONLY;
    else if (b === LF && prev !== CR) insert = CR_ONLY;
    else if (b === DOT && (prev === LF || prev === -1)) insert = DOT_ONLY;
    if (insert) {
      parts.push(body.subarray(from, i), insert);
      from = i;
    }
  }
  parts.push(body.subarray(from));
  // A final bare CR gets its LF here: the end-of-data line then follows a complete line end.
  if (body.length > 0 && body[body.length - 1] === CR) parts.push(LF_ONLY);
  return Buffer.concat(parts);
}

const LF_ONLY = Buffer.from('\n');
const CR_ONLY = Buffer.from('\r');
const DOT_ONLY = Buffer.from('.');
const LF_DOT = Buffer.from('\n.');
