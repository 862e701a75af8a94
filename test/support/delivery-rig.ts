/**
 * The set-up of the tests that send through a real daemon and read what an MX received: the test
 * DNS server, smtp-server MX hosts on 127.0.0.x (all on one port, delivery.port), recipient
 * domains routed to them, a daemon delivering there and a sender whose domain is verified.
 *
 * startDeliveryRig does all of it for one MX; the pieces (deliverySettings, routeTo) serve the
 * tests whose DNS or MX hosts are more particular (DANE, MTA-STS, TLS-RPT reports).
 */
import { startDaemon, type TestDaemon } from './daemon.js';
import { startDnsServer, type TestDns } from './dns-server.js';
import { startMxServer, type MxServer, type MxServerOptions } from './mx-server.js';
import { setupSender, type Sender } from './sending.js';

/** Daemon settings for delivery with DNS from the test server at `dnsAddress` to MX hosts on loopback at `mxPort`. */
export function deliverySettings(dnsAddress: string, mxPort: number): Record<string, unknown> {
  return {
    'dns.servers': [dnsAddress],
    'delivery.enabled': true,
    'delivery.port': mxPort,
    'delivery.allowPrivate': true,
  };
}

/** Routes `domain`'s mail to `address`: MX 10 mx.<domain>, and that host's A record. */
export function routeTo(dns: TestDns, domain: string, address: string): void {
  dns.set(domain, 'MX', [{ priority: 10, exchange: `mx.${domain}` }]);
  dns.set(`mx.${domain}`, 'A', [address]);
}

export interface DeliveryRig {
  dns: TestDns;
  mx: MxServer;
  t: TestDaemon;
  /** A live channel whose domain is verified (its records published in dns). */
  s: Sender;
  /** Stops the daemon, then the MX and the DNS server. */
  stop(): Promise<void>;
}

/**
 * The test DNS server, one MX (`mx`), each of `domains` routed to it, a daemon delivering there
 * with `daemon` settings on top of deliverySettings, and a sender.
 */
export async function startDeliveryRig(o: { mx: MxServerOptions; domains: string[]; daemon?: Record<string, unknown> }): Promise<DeliveryRig> {
  const dns = await startDnsServer();
  let mx: MxServer | undefined;
  let t: TestDaemon | undefined;
  const stop = async (): Promise<void> => {
    await t?.stop();
    await Promise.all([mx?.close(), dns.close()]);
  };
  try {
    mx = await startMxServer(o.mx);
    for (const domain of o.domains) routeTo(dns, domain, mx.address);
    t = await startDaemon({ ...deliverySettings(dns.address, mx.port), ...o.daemon });
    const s = await setupSender(t, dns);
    return { dns, mx, t, s, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
