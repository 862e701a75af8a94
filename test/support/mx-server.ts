/**
 * A receiving MX for delivery tests: a real smtp-server on a loopback address (127.0.0.0/8 is
 * all loopback on Linux, so each MX host gets its own address and they share one port, like
 * delivery.port in production). It records what it receives and lets a test script replies:
 * per RCPT address and for DATA, consumed in order ("451 first, then 250").
 */
import type { Readable } from 'node:stream';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { testCert } from './tls-cert.js';

export interface Reply {
  code: number;
  message: string;
}

export interface Received {
  from: string;
  to: string[];
  raw: Buffer;
  /** True when the session was upgraded with STARTTLS. */
  secure: boolean;
  heloName: string;
  /** The client's address as the server saw it: our source (delivery.sources) or the kernel's choice. */
  remoteAddress: string;
}

export interface MxServerOptions {
  address: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Offer STARTTLS with a fresh self-signed certificate (default true). */
  starttls?: boolean;
  /** Extra TLS options, e.g. { minVersion: 'TLSv1', maxVersion: 'TLSv1' } for a TLS 1.0-only server. */
  tlsOptions?: Partial<SMTPServerOptions>;
  /** Offer STARTTLS but answer it with this reply (e.g. 454 4.7.0), as a receiver with a broken TLS setup does. */
  starttlsReply?: Reply;
  /** Hold each DATA reply this long (slow receivers). */
  dataDelayMs?: number;
  /** Refuse a message with a longer line (octets before CRLF) with "500 Line too long", as strict receivers do. */
  maxLineLength?: number;
  /** The reply to MAIL FROM by the client's address, when it is one (a receiver that defers one sending IP, as Yahoo's [TSS04]). */
  mailFromReply?: (remoteAddress: string) => Reply | undefined;
  /** Extensions left out of the EHLO reply, as a receiver that does not support them (RFC 6152, RFC 6531). */
  hide?: Array<'8BITMIME' | 'SMTPUTF8'>;
}

export interface MxServer {
  address: string;
  port: number;
  received: Received[];
  /** Every RCPT TO address seen, accepted or not. */
  rcpts: string[];
  /** Every MAIL FROM address seen, in the order the server read them: each began a transaction (RFC 5321 3.3). */
  mailFroms: string[];
  /** The parameters of each MAIL FROM (BODY=8BITMIME, SMTPUTF8, SIZE...), in the same order. */
  mailFromArgs: Record<string, string | boolean>[];
  /** Sessions opened. */
  connections: number;
  /** Most sessions open at the same time. */
  maxConcurrent: number;
  /** Most messages being received (between DATA and its reply) at the same time. */
  maxConcurrentData: number;
  /** Sessions the client ended with QUIT. */
  quits: number;
  /** Queue replies for RCPT TO of this address (lowercase), used one per command. */
  scriptRcpt(address: string, ...replies: Reply[]): void;
  /** Queue replies for the end of DATA, used one per message. */
  scriptData(...replies: Reply[]): void;
  close(): Promise<void>;
}

function smtpError(r: Reply): Error {
  return Object.assign(new Error(r.message), { responseCode: r.code });
}

export async function startMxServer(o: MxServerOptions): Promise<MxServer> {
  const rcptScripts = new Map<string, Reply[]>();
  const dataScript: Reply[] = [];
  const starttls = o.starttls ?? true;
  let open = 0;
  let inData = 0;
  const mx: MxServer = {
    address: o.address,
    port: 0,
    received: [],
    rcpts: [],
    mailFroms: [],
    mailFromArgs: [],
    connections: 0,
    maxConcurrent: 0,
    maxConcurrentData: 0,
    quits: 0,
    scriptRcpt: (address, ...replies) => rcptScripts.set(address.toLowerCase(), [...(rcptScripts.get(address.toLowerCase()) ?? []), ...replies]),
    scriptData: (...replies) => dataScript.push(...replies),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    ...(starttls ? testCert() : {}),
    ...o.tlsOptions,
    name: `mx-${o.address}`,
    logger: false,
    authOptional: true,
    disabledCommands: starttls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    hideSTARTTLS: !starttls,
    hide8BITMIME: o.hide?.includes('8BITMIME'),
    hideSMTPUTF8: o.hide?.includes('SMTPUTF8'),
    onConnect(_session, cb) {
      mx.connections++;
      open++;
      mx.maxConcurrent = Math.max(mx.maxConcurrent, open);
      cb();
    },
    onClose() {
      open--;
    },
    onMailFrom(address, session, cb) {
      mx.mailFroms.push(address.address);
      mx.mailFromArgs.push((address.args || {}) as Record<string, string | boolean>);
      const reply = o.mailFromReply?.(session.remoteAddress.replace(/^::ffff:/, ''));
      cb(reply && reply.code >= 400 ? smtpError(reply) : undefined);
    },
    onRcptTo(address, _session, cb) {
      mx.rcpts.push(address.address);
      const next = rcptScripts.get(address.address.toLowerCase())?.shift();
      cb(next && next.code >= 400 ? smtpError(next) : undefined);
    },
    onData(stream: Readable, session: SMTPServerSession, cb) {
      const chunks: Buffer[] = [];
      inData++;
      mx.maxConcurrentData = Math.max(mx.maxConcurrentData, inData);
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const tooLong = o.maxLineLength !== undefined && longestLine(Buffer.concat(chunks)) > o.maxLineLength;
        const next = tooLong ? { code: 500, message: 'Line too long' } : dataScript.shift();
        const finish = () => {
          inData--;
          if (next && next.code >= 400) return cb(smtpError(next));
          mx.received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks),
            secure: session.secure,
            heloName: session.hostNameAppearsAs,
            remoteAddress: session.remoteAddress.replace(/^::ffff:/, ''),
          });
          cb(null, next?.message);
        };
        if (o.dataDelayMs) setTimeout(finish, o.dataDelayMs);
        else finish();
      });
    },
  });
  if (o.starttlsReply) refuseStarttls(server, o.starttlsReply);
  countQuits(server, mx);
  server.on('error', () => undefined); // a client dropping mid-session is not the test's business
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  mx.port = (server.server.address() as { port: number }).port;
  return mx;
}

/** Several MX servers on consecutive addresses sharing one port (retries if it is taken). */
export async function startMxServers(addresses: string[], o: Omit<MxServerOptions, 'address' | 'port'> = {}): Promise<MxServer[]> {
  for (let attempt = 0; ; attempt++) {
    const first = await startMxServer({ ...o, address: addresses[0] });
    const rest: MxServer[] = [];
    try {
      for (const address of addresses.slice(1)) rest.push(await startMxServer({ ...o, address, port: first.port }));
      return [first, ...rest];
    } catch (err) {
      await Promise.all([first, ...rest].map((s) => s.close()));
      if (attempt >= 5) throw err;
    }
  }
}

/** A command handler of one smtp-server connection (the library's internal naming). */
type Handler = (command: Buffer, cb: () => void) => void;
type Conn = { handler_STARTTLS: Handler; handler_QUIT: Handler; send(code: number, message: string): void };

/**
 * smtp-server (3.x) has no hooks for single commands: `patch` runs on each new connection right
 * after the library made it, so a test can replace that connection's command handlers.
 */
function onEachConnection(server: SMTPServer, patch: (c: Conn) => void): void {
  const internals = server as unknown as { connect(socket: unknown, options: unknown): void; connections: Set<Conn> };
  const connect = internals.connect.bind(server);
  internals.connect = (socket, options) => {
    const before = new Set(internals.connections);
    connect(socket, options);
    for (const c of internals.connections) if (!before.has(c)) patch(c);
  };
}

/** STARTTLS answered with `reply` (and no TLS) on every connection. */
function refuseStarttls(server: SMTPServer, reply: Reply): void {
  onEachConnection(server, (c) => {
    c.handler_STARTTLS = (_command, cb) => {
      c.send(reply.code, reply.message);
      cb();
    };
  });
}

/** Counts the QUIT commands the server receives (in mx.quits). */
function countQuits(server: SMTPServer, mx: MxServer): void {
  onEachConnection(server, (c) => {
    const quit = c.handler_QUIT.bind(c);
    c.handler_QUIT = (command, cb) => {
      mx.quits++;
      quit(command, cb);
    };
  });
}

function longestLine(raw: Buffer): number {
  return raw
    .toString('latin1')
    .split('\n')
    .reduce((max, l) => Math.max(max, l.replace(/\r$/, '').length), 0);
}
