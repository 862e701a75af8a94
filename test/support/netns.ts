/**
 * A network namespace of the test's own (`ip netns add`, needs root and iproute2), for failures
 * that loopback cannot produce: an address family the machine has no route for (connect() fails
 * with ENETUNREACH), a blackhole route (EINVAL), an unreachable route (EHOSTUNREACH). Inside it
 * only `lo` exists, so nothing sent there can leave the machine; routes added with `route()`
 * change only this namespace.
 *
 * A daemon started in the namespace (ChildDaemon's `netns` option) still has to talk to the test's
 * servers and be talked to, so `bridge()` relays chosen loopback ports between the namespaces
 * through unix sockets (the file system is shared, the network is not): TCP into the namespace
 * (the daemon's HTTP port), TCP and UDP out of it (the test DNS server, an MX, a webhook receiver).
 * The same host:port is used on both sides. The relay inside the namespace is a node process
 * running `relayInNamespace` below, passed as source text: it must not use anything from outside
 * its own body.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** One relayed port. `toward: 'ns'`: test → server in the namespace; `'host'`: namespace → test's server. */
export interface Bridge {
  proto: 'tcp' | 'udp';
  toward: 'ns' | 'host';
  host: string;
  port: number;
}

interface BridgeSpec extends Bridge {
  socketPath: string;
}

/** Why namespaces cannot be used here, or null when they can. */
export async function netnsUnavailable(): Promise<string | null> {
  if (process.getuid?.() !== 0) return 'not root';
  const probe = `pr-probe-${process.pid}`;
  try {
    await run('ip', ['netns', 'add', probe]);
    await run('ip', ['netns', 'del', probe]);
    return null;
  } catch (err) {
    return `ip netns does not work here: ${(err as Error).message}`;
  }
}

let counter = 0;

export class NetNs {
  private relay: ChildProcess | null = null;
  private readonly closers: Array<() => Promise<void> | void> = [];
  private readonly dir: string;

  private constructor(readonly name: string) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  }

  /** A new namespace with `lo` up (127.0.0.1/8 and ::1) and nothing else. */
  static async create(): Promise<NetNs> {
    const ns = new NetNs(`pr-${process.pid}-${++counter}`);
    await run('ip', ['netns', 'add', ns.name]);
    await ns.ip(['link', 'set', 'lo', 'up']);
    return ns;
  }

  /** `ip -n <name> ...` */
  async ip(args: string[]): Promise<void> {
    await run('ip', ['-n', this.name, ...args]);
  }

  /** A route of this namespace, e.g. `route('-6', 'blackhole', '2001:db8:1::/48')`. */
  async route(...spec: string[]): Promise<void> {
    const family = spec[0] === '-6' || spec[0] === '-4' ? [spec.shift()!] : [];
    await this.ip([...family, 'route', 'add', ...spec]);
  }

  /** The argv that runs `cmd args` inside the namespace. */
  wrap(cmd: string, args: string[]): [string, string[]] {
    return ['ip', ['netns', 'exec', this.name, cmd, ...args]];
  }

  /** Starts relaying the given ports; resolves once every listener on both sides is up. */
  async bridge(bridges: Bridge[]): Promise<void> {
    if (this.relay) throw new Error('bridge() once per namespace');
    const specs: BridgeSpec[] = bridges.map((b, i) => ({ ...b, socketPath: path.join(this.dir, `${i}.sock`) }));
    for (const s of specs) this.closers.push(await hostSide(s));
    const [cmd, args] = this.wrap(process.execPath, ['-e', `(${relayInNamespace.toString()})(${JSON.stringify(specs)})`]);
    const relay = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.relay = relay;
    let stderr = '';
    relay.stderr!.on('data', (d) => (stderr += d));
    await new Promise<void>((resolve, reject) => {
      relay.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      relay.once('exit', (code) => reject(new Error(`namespace relay exited (${code}): ${stderr}`)));
    });
  }

  async remove(): Promise<void> {
    const relay = this.relay;
    if (relay && relay.exitCode === null && relay.signalCode === null) {
      const gone = new Promise((r) => relay.once('exit', r));
      relay.kill('SIGKILL');
      await gone;
    }
    for (const close of this.closers.splice(0)) await close();
    await run('ip', ['netns', 'del', this.name]).catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Joins two streams; either one failing or ending ends the other. */
function splice(a: net.Socket, b: net.Socket): void {
  a.pipe(b);
  b.pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
}

/** The test's side of one bridge; resolves with its closer. */
async function hostSide(s: BridgeSpec): Promise<() => Promise<void>> {
  const sockets = new Set<net.Socket>();
  const track = (c: net.Socket): net.Socket => (sockets.add(c), c.on('close', () => sockets.delete(c)));
  let server: net.Server;
  if (s.toward === 'ns') {
    // Test clients connect to host:port here; the relay in the namespace serves the unix socket.
    server = net.createServer((c) => splice(track(c), track(net.connect({ path: s.socketPath }))));
    await new Promise<void>((resolve) => server.listen(s.port, s.host, resolve));
  } else if (s.proto === 'tcp') {
    server = net.createServer((c) => splice(track(c), track(net.connect({ host: s.host, port: s.port }))));
    await new Promise<void>((resolve) => server.listen(s.socketPath, resolve));
  } else {
    // One unix connection per client port of the namespace; datagrams framed with a 2-byte length.
    server = net.createServer((c) => {
      track(c);
      const udp = dgram.createSocket(net.isIPv6(s.host) ? 'udp6' : 'udp4');
      udp.on('error', () => c.destroy());
      udp.on('message', (m) => c.write(Buffer.concat([Buffer.from([m.length >> 8, m.length & 0xff]), m])));
      c.on('close', () => udp.close());
      c.on('error', () => c.destroy());
      let pending = Buffer.alloc(0);
      c.on('data', (d: Buffer) => {
        pending = Buffer.concat([pending, d]);
        while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
          udp.send(pending.subarray(2, 2 + pending.readUInt16BE(0)), s.port, s.host);
          pending = pending.subarray(2 + pending.readUInt16BE(0));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(s.socketPath, resolve));
  }
  return async () => {
    for (const c of sockets) c.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

/**
 * The namespace's side of every bridge, run by `node -e` inside it. Self-contained on purpose:
 * its source text is all the child gets.
 */
function relayInNamespace(specs: BridgeSpec[]): void {
  const netm = process.getBuiltinModule('node:net');
  const dgramm = process.getBuiltinModule('node:dgram');
  const join = (a: net.Socket, b: net.Socket): void => {
    a.pipe(b);
    b.pipe(a);
    for (const [x, y] of [[a, b], [b, a]]) {
      x.on('error', () => y.destroy());
      x.on('close', () => y.destroy());
    }
  };
  let waiting = specs.length;
  const listening = (): void => {
    if (--waiting === 0) process.stdout.write('ready\n');
  };
  for (const s of specs) {
    if (s.toward === 'ns') {
      netm.createServer((c) => join(c, netm.connect({ host: s.host, port: s.port }))).listen(s.socketPath, listening);
    } else if (s.proto === 'tcp') {
      netm.createServer((c) => join(c, netm.connect({ path: s.socketPath }))).listen(s.port, s.host, listening);
    } else {
      const udp = dgramm.createSocket(netm.isIPv6(s.host) ? 'udp6' : 'udp4');
      const peers = new Map<string, net.Socket>();
      udp.on('message', (m, from) => {
        const key = `${from.address}|${from.port}`;
        let c = peers.get(key);
        if (!c) {
          const conn = netm.connect({ path: s.socketPath });
          let pending = Buffer.alloc(0);
          conn.on('data', (d: Buffer) => {
            pending = Buffer.concat([pending, d]);
            while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
              udp.send(pending.subarray(2, 2 + pending.readUInt16BE(0)), from.port, from.address);
              pending = pending.subarray(2 + pending.readUInt16BE(0));
            }
          });
          conn.on('error', () => conn.destroy());
          conn.on('close', () => peers.delete(key));
          peers.set(key, conn);
          c = conn;
        }
        c.write(Buffer.concat([Buffer.from([m.length >> 8, m.length & 0xff]), m]));
      });
      udp.bind(s.port, s.host, listening);
    }
  }
}
