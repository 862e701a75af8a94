/**
 * Which IP addresses are globally reachable unicast addresses, from the IANA IPv4 and IPv6
 * Special-Purpose Address Registries (RFC 6890 and its updates). Delivery (MX addresses) and
 * webhooks (target addresses) both refuse everything else unless configured for tests, because
 * an address chosen by someone else (an MX record, a webhook URL) must not make the daemon talk
 * to itself, to a cloud metadata service or to the LAN (SSRF).
 *
 * Rules: every registry entry whose "Globally Reachable" is False is refused, and so are the
 * deprecated and transition prefixes that lead to arbitrary IPv4 addresses (IPv4-mapped and
 * -compatible, NAT64, 6to4), multicast, and any IPv6 address outside 2000::/3, the only block
 * IANA allocates for global unicast (RFC 4291 2.4; the rest is reserved by the IETF).
 */
import net from 'node:net';

export interface SpecialRange {
  /** The registry prefix, e.g. "127.0.0.0/8". */
  prefix: string;
  /** What the range is for, and the RFC that says so. */
  purpose: string;
}

/** [prefix, purpose and RFC]; the most specific match names the refusal. */
const V4: ReadonlyArray<readonly [string, string]> = [
  ['0.0.0.0/8', '"this network" (RFC 791 3.2, RFC 1122 3.2.1.3)'],
  ['10.0.0.0/8', 'private use (RFC 1918)'],
  ['100.64.0.0/10', 'shared address space, carrier-grade NAT (RFC 6598)'],
  ['127.0.0.0/8', 'loopback (RFC 1122 3.2.1.3)'],
  ['169.254.0.0/16', 'link local, cloud metadata services (RFC 3927)'],
  ['172.16.0.0/12', 'private use (RFC 1918)'],
  // The whole /24 is not globally reachable; its two anycast /32s that are (PCP RFC 7723, TURN
  // RFC 8155) are no mail or webhook servers. Includes the service continuity prefix
  // 192.0.0.0/29 (RFC 7335), the dummy address 192.0.0.8 (RFC 7600) and NAT64 discovery
  // 192.0.0.170-171 (RFC 8880).
  ['192.0.0.0/24', 'IETF protocol assignments (RFC 6890 2.1)'],
  ['192.0.2.0/24', 'documentation TEST-NET-1 (RFC 5737)'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast (RFC 7526)'],
  ['192.168.0.0/16', 'private use (RFC 1918)'],
  ['198.18.0.0/15', 'benchmarking (RFC 2544)'],
  ['198.51.100.0/24', 'documentation TEST-NET-2 (RFC 5737)'],
  ['203.0.113.0/24', 'documentation TEST-NET-3 (RFC 5737)'],
  // Not in the special-purpose registry, but a group address is never a unicast peer.
  ['224.0.0.0/4', 'multicast (RFC 5771)'],
  ['240.0.0.0/4', 'reserved (RFC 1112 4)'],
  ['255.255.255.255/32', 'limited broadcast (RFC 919 7, RFC 8190)'],
];

const V6: ReadonlyArray<readonly [string, string]> = [
  ['::/128', 'unspecified (RFC 4291 2.5.2)'],
  ['::1/128', 'loopback (RFC 4291 2.5.3)'],
  // ::7f00:1 is 127.0.0.1 in the deprecated IPv4-compatible form.
  ['::/96', 'IPv4-compatible, deprecated (RFC 4291 2.5.5.1)'],
  ['::ffff:0:0/96', 'IPv4-mapped (RFC 4291 2.5.5.2)'],
  // Globally reachable in the registry, but the translator forwards to any IPv4 address,
  // private ones included: 64:ff9b::a00:1 is 10.0.0.1 behind the NAT64.
  ['64:ff9b::/96', 'IPv4/IPv6 translation, NAT64 (RFC 6052)'],
  ['64:ff9b:1::/48', 'local-use IPv4/IPv6 translation (RFC 8215)'],
  ['100::/64', 'discard-only (RFC 6666)'],
  // Teredo 2001::/32 (RFC 4380), benchmarking 2001:2::/48 (RFC 5180), ORCHID (RFC 4843, RFC 7343)
  // and a few anycast services: none of them is a mail or webhook server.
  ['2001::/23', 'IETF protocol assignments (RFC 2928)'],
  ['2001:db8::/32', 'documentation (RFC 3849)'],
  // 2002:7f00:1:: carries 127.0.0.1: a 6to4 relay would forward to the embedded IPv4 address.
  ['2002::/16', '6to4 (RFC 3056)'],
  ['3fff::/20', 'documentation (RFC 9637)'],
  ['5f00::/16', 'segment routing SIDs (RFC 9602)'],
  ['fc00::/7', 'unique local (RFC 4193)'],
  ['fe80::/10', 'link-local (RFC 4291 2.5.6)'],
  ['fec0::/10', 'site-local, deprecated (RFC 3879)'],
  ['ff00::/8', 'multicast (RFC 4291 2.7)'],
];

const OUTSIDE_GLOBAL_UNICAST: SpecialRange = { prefix: '!2000::/3', purpose: 'outside global unicast 2000::/3 (RFC 4291 2.4)' };
const NOT_AN_ADDRESS: SpecialRange = { prefix: '', purpose: 'not an IP address' };
const ZONED: SpecialRange = { prefix: '', purpose: 'an address with a zone index is link-local (RFC 4007 11)' };

/** The special range that makes this address unusable as a peer, or null when it is global. */
export function specialRange(address: string): SpecialRange | null {
  const family = net.isIP(address);
  if (family === 0) return NOT_AN_ADDRESS;
  if (address.includes('%')) return ZONED;
  const bytes = family === 4 ? ipv4Bytes(address) : ipv6Bytes(address);
  let best: { prefix: string; purpose: string; bits: number } | null = null;
  for (const [prefix, purpose] of family === 4 ? V4 : V6) {
    const [network, length] = prefix.split('/');
    const bits = Number(length);
    if ((!best || bits > best.bits) && matches(bytes, family === 4 ? ipv4Bytes(network) : ipv6Bytes(network), bits)) best = { prefix, purpose, bits };
  }
  if (best) return { prefix: best.prefix, purpose: best.purpose };
  if (family === 6 && (bytes[0] & 0xe0) !== 0x20) return OUTSIDE_GLOBAL_UNICAST;
  return null;
}

/** True for a globally reachable unicast address; false for anything else, non-addresses too. */
export function isGloballyReachable(address: string): boolean {
  return specialRange(address) === null;
}

function matches(address: number[], network: number[], bits: number): boolean {
  for (let i = 0; i < bits; i += 8) {
    const take = Math.min(8, bits - i);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((address[i / 8] & mask) !== (network[i / 8] & mask)) return false;
  }
  return true;
}

/** Dotted quad (already validated by net.isIP) as 4 bytes. */
function ipv4Bytes(s: string): number[] {
  return s.split('.').map(Number);
}

/** RFC 4291 2.2 text form (already validated by net.isIPv6) as 16 bytes, "::" and IPv4 tail included. */
function ipv6Bytes(s: string): number[] {
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const groups = (part: string | undefined): number[] => {
    if (!part) return [];
    return part.split(':').flatMap((g) => {
      if (!g.includes('.')) return [parseInt(g, 16)];
      const [a, b, c, d] = ipv4Bytes(g);
      return [(a << 8) | b, (c << 8) | d];
    });
  };
  const left = groups(head);
  const right = groups(tail);
  const words = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}
