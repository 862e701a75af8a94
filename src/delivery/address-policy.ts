/**
 * Which IP addresses we may connect to for delivery. A recipient domain chooses its MX, so
 * anyone who can send through us can point a domain at 127.0.0.1:25, at a cloud metadata
 * address or at a host on our LAN and make the daemon talk SMTP to it (SSRF). In production
 * every address that is not globally routable is refused; tests set delivery.allowPrivate to
 * deliver to MX servers on loopback.
 */
import net from 'node:net';

/** [network, prefix length, why], IPv4 (RFC 6890 special-purpose registry). */
const V4: ReadonlyArray<[string, number]> = [
  ['0.0.0.0', 8], // "this network", includes the unspecified 0.0.0.0 (RFC 1122 3.2.1.3)
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback (RFC 1122)
  ['169.254.0.0', 16], // link-local, cloud metadata services (RFC 3927)
  ['172.16.0.0', 12], // private (RFC 1918)
  ['192.0.0.0', 24], // IETF protocol assignments (RFC 6890)
  ['192.0.2.0', 24], // documentation (RFC 5737)
  ['192.168.0.0', 16], // private (RFC 1918)
  ['198.18.0.0', 15], // benchmarking (RFC 2544)
  ['198.51.100.0', 24], // documentation (RFC 5737)
  ['203.0.113.0', 24], // documentation (RFC 5737)
  ['224.0.0.0', 4], // multicast (RFC 5771)
  ['240.0.0.0', 4], // reserved and broadcast (RFC 1112, RFC 919)
];

const V6: ReadonlyArray<[string, number]> = [
  ['::', 128], // unspecified (RFC 4291 2.5.2)
  ['::1', 128], // loopback (RFC 4291 2.5.3)
  ['100::', 64], // discard-only (RFC 6666)
  ['2001:db8::', 32], // documentation (RFC 3849)
  ['fc00::', 7], // unique local (RFC 4193)
  ['fe80::', 10], // link-local (RFC 4291 2.5.6)
  ['ff00::', 8], // multicast (RFC 4291 2.7)
];

export class AddressPolicy {
  private readonly blocked = new net.BlockList();

  constructor(private readonly opts: { allowPrivate: boolean }) {
    for (const [network, prefix] of V4) this.blocked.addSubnet(network, prefix, 'ipv4');
    for (const [network, prefix] of V6) this.blocked.addSubnet(network, prefix, 'ipv6');
  }

  /** True when delivery may connect to this address. Anything that is not an IP is refused. */
  allows(address: string): boolean {
    const family = net.isIP(address);
    if (family === 0) return false;
    if (this.opts.allowPrivate) return true;
    // IPv4-mapped IPv6 (RFC 4291 2.5.5.2) in an AAAA record is never a real MX and could reach
    // the IPv4 ranges above. (Not a BlockList subnet: BlockList matches IPv4 addresses against
    // ::ffff:0:0/96, which would refuse every IPv4 address.)
    if (family === 6 && /^::ffff:/i.test(address)) return false;
    return !this.blocked.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }
}
