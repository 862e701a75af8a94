/**
 * Sending IPs (issue 35): the sources (local addresses outgoing connections are bound to, each
 * with its EHLO name) and the pools that weigh them, as configured in delivery.sources,
 * delivery.pools and delivery.defaultPools. Checked once when the config is loaded
 * (sendingIpProblems), resolved into a SendingIps value the dispatcher and GET /ops/sources read.
 *
 * With no source configured, every pool is the one implicit pool "default" whose one source is
 * the kernel's choice (KERNEL_SOURCE: no address bound, hostname in EHLO), which is how
 * postrider sent before sources existed.
 */
import net from 'node:net';
import type { MailType } from './types.js';
import { warmupProblems, type WarmupSetting } from './warmup-plan.js';

export interface SourceSetting {
  name: string;
  address: string;
  ehloName?: string;
  rate?: number;
  warmup?: WarmupSetting;
}

export interface PoolMember {
  source: string;
  weight: number;
}

export interface SendingIpSettings {
  sources: readonly SourceSetting[];
  pools: Readonly<Record<string, readonly PoolMember[]>>;
  defaultPools: { transactional: string; broadcast: string };
}

export interface SendingSource {
  name: string;
  /** The local address to bind to; undefined for the kernel's choice. */
  address?: string;
  /** The EHLO name (RFC 5321 4.1.1.1), which should be the address's PTR name. */
  ehloName: string;
  /** Messages per second from this source at the receivers, when it has a rate of its own. */
  rate?: number;
  /** Its warm-up plan, while it has one (delivery/warmup-gate.ts holds its caps). */
  warmup?: WarmupSetting;
}

export interface SendingIps {
  /** Every source by name; just KERNEL_SOURCE_NAME when none is configured. */
  sources: ReadonlyMap<string, SendingSource>;
  /** Every pool by name, "default" included, with at least one member each. */
  pools: ReadonlyMap<string, readonly PoolMember[]>;
  defaultPools: Readonly<Record<MailType, string>>;
  /** Whether sources are configured (false: today's behaviour, the kernel picks the address). */
  configured: boolean;
}

export const DEFAULT_POOL = 'default';
// RFC 5321 4.1.1.1: the EHLO argument is a domain (config/schema.ts's HOSTNAME).
const EHLO_NAME = /^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
export const KERNEL_SOURCE_NAME = 'kernel';

/** Everything wrong with the sources and pools, each as a line for the config error. */
export function sendingIpProblems(s: SendingIpSettings): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  const addresses = new Set<string>();
  for (const source of s.sources) {
    if (names.has(source.name)) problems.push(`"delivery.sources" names "${source.name}" twice`);
    names.add(source.name);
    if (source.ehloName !== undefined && !EHLO_NAME.test(source.ehloName)) problems.push(`"delivery.sources" source "${source.name}": ehloName "${source.ehloName}" is not a host name`);
    const address = normalAddress(source.address);
    if (address === undefined) problems.push(`"delivery.sources" source "${source.name}": address "${source.address}" is not an IPv4 or IPv6 address`);
    else if (addresses.has(address)) problems.push(`"delivery.sources" binds address ${address} twice (one EHLO name per address)`);
    else addresses.add(address);
    if (source.warmup !== undefined) problems.push(...warmupProblems(source.name, source.warmup));
  }
  for (const [pool, members] of Object.entries(s.pools)) {
    if (members.length === 0) problems.push(`"delivery.pools" pool "${pool}" has no sources`);
    const seen = new Set<string>();
    for (const m of members) {
      if (!names.has(m.source)) problems.push(`"delivery.pools" pool "${pool}" names source "${m.source}", which is not in delivery.sources`);
      if (seen.has(m.source)) problems.push(`"delivery.pools" pool "${pool}" names source "${m.source}" twice`);
      seen.add(m.source);
    }
  }
  for (const type of ['transactional', 'broadcast'] as const) {
    const pool = s.defaultPools[type];
    if (pool !== '' && pool !== DEFAULT_POOL && !(pool in s.pools)) problems.push(`"delivery.defaultPools.${type}" names pool "${pool}", which is not in delivery.pools`);
  }
  return problems;
}

/** The checked settings as the dispatcher uses them; `hostname` is the EHLO name of sources without their own. */
export function resolveSendingIps(s: SendingIpSettings, hostname: string): SendingIps {
  const defaultPools = {
    transactional: s.defaultPools.transactional || DEFAULT_POOL,
    broadcast: s.defaultPools.broadcast || DEFAULT_POOL,
  };
  if (s.sources.length === 0) {
    const kernel: SendingSource = { name: KERNEL_SOURCE_NAME, ehloName: hostname };
    return { sources: new Map([[kernel.name, kernel]]), pools: new Map([[DEFAULT_POOL, [{ source: kernel.name, weight: 1 }]]]), defaultPools, configured: false };
  }
  const sources = new Map(s.sources.map((x) => [x.name, sourceOf(x, hostname)]));
  const pools = new Map<string, readonly PoolMember[]>(Object.entries(s.pools));
  // The implicit "default" pool: every source alike, unless the operator defined one.
  if (!pools.has(DEFAULT_POOL)) pools.set(DEFAULT_POOL, s.sources.map((x) => ({ source: x.name, weight: 1 })));
  return { sources, pools, defaultPools, configured: true };
}

/** The pool a message goes out through: its channel's ipPool, else its mail type's default pool. */
export function poolOf(ips: SendingIps, mailType: MailType, channelPool: string | undefined): string {
  if (channelPool !== undefined && ips.pools.has(channelPool)) return channelPool;
  return ips.defaultPools[mailType];
}

/** Whether `name` may be a channel's ipPool: a configured pool, or "default". */
export function isPool(ips: SendingIps, name: string): boolean {
  return ips.pools.has(name);
}

function sourceOf(x: SourceSetting, hostname: string): SendingSource {
  const source: SendingSource = { name: x.name, address: normalAddress(x.address) ?? x.address, ehloName: (x.ehloName ?? hostname).toLowerCase() };
  if (x.rate !== undefined) source.rate = x.rate;
  if (x.warmup !== undefined) source.warmup = x.warmup;
  return source;
}

/**
 * The address in one spelling (IPv6 compressed, lowercase), or undefined when it is not one. A
 * zone index ("fe80::1%eth0", which net.isIP takes and URL refuses) makes it none: only a
 * link-local address has one, and no receiver is reached from such an address.
 */
function normalAddress(address: string): string | undefined {
  const trimmed = address.trim();
  const kind = net.isIP(trimmed);
  if (kind === 4) return trimmed;
  if (kind !== 6 || trimmed.includes('%')) return undefined;
  const canonical = new URL(`http://[${trimmed}]/`).hostname.slice(1, -1);
  // An IPv4-mapped address (RFC 4291 2.5.5.2, ::ffff:a.b.c.d) is the IPv4 address: a socket bound
  // to it as IPv6 reaches no IPv4 MX (target-family.ts), and bound as IPv4 it reaches them all.
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!mapped) return canonical;
  const hi = Number.parseInt(mapped[1]!, 16);
  const lo = Number.parseInt(mapped[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}
