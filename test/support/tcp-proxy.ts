/**
 * A TCP proxy on loopback in front of a server (a PostgreSQL of the tests), to cut one client's
 * way to it while the server and its other clients go on: the faults of a network between a
 * node and its database, which a crash of the shared test server cannot give one node alone.
 *
 *  - cut(): every connection through the proxy is destroyed and new ones are refused (closed
 *    at once), as when the database's host goes away;
 *  - swallowReplies(): what the server sends is dropped from now on, so a statement reaches the
 *    server and commits but its answer never arrives; a cut() then ends the wait with an error,
 *    the client not knowing whether it committed;
 *  - restore(): connections pass again (the cut ones stay cut).
 */
import net from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Connections currently open through the proxy. */
  readonly open: number;
  cut(): void;
  swallowReplies(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: net.Socket; server: net.Socket }>();
  let state: 'pass' | 'cut' | 'swallow' = 'pass';
  const srv = net.createServer((client) => {
    if (state === 'cut') return void client.destroy();
    const server = net.connect(target.port, target.host);
    const pair = { client, server };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', end);
    server.on('error', end).on('close', end);
    client.on('data', (d) => (state === 'pass' || state === 'swallow') && server.write(d));
    server.on('data', (d) => state === 'pass' && client.write(d));
  });
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', resolve);
  });
  const cutAll = () => {
    for (const { client, server } of pairs) {
      client.destroy();
      server.destroy();
    }
    pairs.clear();
  };
  return {
    port: (srv.address() as net.AddressInfo).port,
    get open() {
      return pairs.size;
    },
    cut() {
      state = 'cut';
      cutAll();
    },
    swallowReplies() {
      state = 'swallow';
    },
    restore() {
      state = 'pass';
    },
    close: () =>
      new Promise<void>((resolve) => {
        cutAll();
        srv.close(() => resolve());
      }),
  };
}
