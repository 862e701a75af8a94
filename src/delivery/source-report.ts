/**
 * What GET /ops/sources shows of the sending IPs (issue 35), and the check at start: each source
 * with its address, EHLO name, rate and pools, and whether its reverse DNS is forward-confirmed
 * (FCrDNS): the address's PTR names the EHLO name, and that name's A/AAAA records include the
 * address. Receivers compare the three (RFC 5321 4.1.4 lets them, and the big providers refuse
 * or junk mail from addresses without a matching PTR), so a mismatch is worth a warning at start.
 */
import type { DnsAnswer } from '../dns/resolver.js';
import type { Logger } from '../log/logger.js';
import type { SendingIps, SendingSource } from '../domain/sending-ips.js';
import type { SourceGate } from './source-gates.js';

export interface ReverseLookups {
  ptr(address: string): Promise<DnsAnswer<string[]>>;
  a(name: string): Promise<DnsAnswer<string[]>>;
  aaaa(name: string): Promise<DnsAnswer<string[]>>;
}

/**
 * `confirmed`: PTR and forward records agree; `no_ptr`: the address has no PTR record;
 * `ptr_mismatch`: its PTR names another host; `forward_mismatch`: the EHLO name's A/AAAA lack the
 * address; `dns_error`: a lookup failed (try again); `not_checked`: no address (the kernel's choice).
 */
export type PtrStatus = 'confirmed' | 'no_ptr' | 'ptr_mismatch' | 'forward_mismatch' | 'dns_error' | 'not_checked';

export interface PtrCheck {
  status: PtrStatus;
  /** The names the address's PTR records give. */
  ptrNames: string[];
  /** The EHLO name's addresses (A or AAAA, by the source's family). */
  forwardAddresses: string[];
}

export interface SourceView {
  name: string;
  /** null: no address bound, the kernel picks it (no delivery.sources). */
  address: string | null;
  ehloName: string;
  /** Its own rate (messages/s), null when delivery.rate alone holds it. */
  rate: number | null;
  /** The pools it belongs to, with its weight in each. */
  pools: { pool: string; weight: number }[];
  ptr: PtrCheck;
  /** Each gate's view of the source (source-gates.ts), under the gate's name: `warmup`, `shaping`, `health`. */
  [gate: string]: unknown;
}

export class SourceReport {
  constructor(private readonly o: { ips: SendingIps; dns: ReverseLookups; gates?: readonly SourceGate[]; now?: () => number }) {}

  /** Every source, in configuration order, with its PTR checked now (through the resolver's cache). */
  list(): Promise<SourceView[]> {
    return Promise.all([...this.o.ips.sources.values()].map((s) => this.view(s)));
  }

  /** One warn line per source whose PTR is not forward-confirmed (at start). */
  async warnMismatches(logger: Logger): Promise<void> {
    for (const s of await this.list()) {
      if (s.ptr.status === 'confirmed' || s.ptr.status === 'not_checked') continue;
      const fields = { source: s.name, address: s.address, ehloName: s.ehloName, ptr: s.ptr.status, ptrNames: s.ptr.ptrNames };
      // A failed lookup says nothing of the records: the check is GET /ops/sources's to repeat.
      if (s.ptr.status === 'dns_error') logger.warn(fields, 'sending source: its reverse DNS could not be checked (a lookup failed); GET /ops/sources checks again');
      else logger.warn(fields, 'sending source: reverse DNS does not confirm its EHLO name; receivers may refuse or junk its mail');
    }
  }

  private async view(s: SendingSource): Promise<SourceView> {
    const pools = [...this.o.ips.pools].flatMap(([pool, members]) => members.filter((m) => m.source === s.name).map((m) => ({ pool, weight: m.weight })));
    const view: SourceView = { name: s.name, address: s.address ?? null, ehloName: s.ehloName, rate: s.rate ?? null, pools, ptr: await this.check(s) };
    const now = (this.o.now ?? Date.now)();
    for (const gate of this.o.ips.configured ? (this.o.gates ?? []) : []) {
      const part = await gate.view?.(s.name, now);
      if (part !== undefined) view[gate.name] = part;
    }
    return view;
  }

  private async check(s: SendingSource): Promise<PtrCheck> {
    if (s.address === undefined) return { status: 'not_checked', ptrNames: [], forwardAddresses: [] };
    const ptr = await this.o.dns.ptr(s.address);
    if (ptr.status === 'error') return { status: 'dns_error', ptrNames: [], forwardAddresses: [] };
    const ptrNames = ptr.status === 'ok' ? ptr.records : [];
    if (ptrNames.length === 0) return { status: 'no_ptr', ptrNames, forwardAddresses: [] };
    if (!ptrNames.includes(s.ehloName)) return { status: 'ptr_mismatch', ptrNames, forwardAddresses: [] };
    const forward = s.address.includes(':') ? await this.o.dns.aaaa(s.ehloName) : await this.o.dns.a(s.ehloName);
    if (forward.status === 'error') return { status: 'dns_error', ptrNames, forwardAddresses: [] };
    const forwardAddresses = forward.status === 'ok' ? forward.records : [];
    return { status: forwardAddresses.includes(s.address) ? 'confirmed' : 'forward_mismatch', ptrNames, forwardAddresses };
  }
}
