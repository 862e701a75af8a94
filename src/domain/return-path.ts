/**
 * The return-path (bounce) domain of a sending domain: `<label>.<domain>`, used as the envelope
 * sender (RFC 5321 4.1.2 MAIL FROM) so bounces come back to this daemon. It needs an MX pointing
 * at our host name, and an SPF record (RFC 7208) authorizing our host, because SPF is checked
 * against the MAIL FROM domain.
 */

export type DnsRecordType = 'txt' | 'cname' | 'mx';

/** A record the operator must publish, as the API shows it (an mx value is "<priority> <host>"). */
export interface ExpectedRecord {
  type: DnsRecordType;
  host: string;
  value: string;
}

export function returnPathHost(domain: string, label: string): string {
  return `${label}.${domain}`;
}

export function returnPathRecords(o: { domain: string; label: string; hostname: string }): ExpectedRecord[] {
  const host = returnPathHost(o.domain, o.label);
  return [
    { type: 'mx', host, value: `10 ${o.hostname}` },
    { type: 'txt', host, value: `v=spf1 a:${o.hostname} ~all` },
  ];
}

/**
 * The host a return-path record names: the exchange of `<priority> <host>`, the `a:` host of our
 * SPF value. A record stored with earlier settings is checked against its own host.
 */
export function returnPathTarget(r: ExpectedRecord): string {
  if (r.type === 'mx') return r.value.trim().split(/\s+/).pop() ?? '';
  return /(?:^|\s)a:(\S+)/i.exec(r.value)?.[1] ?? '';
}

/** Host names compare case-insensitively (RFC 4343) and without the root dot. */
export function sameHost(a: string, b: string): boolean {
  const norm = (s: string) => s.trim().toLowerCase().replace(/\.$/, '');
  return norm(a) === norm(b);
}

/** True when one of the MX records names our host (its priority does not matter). */
export function mxPointsTo(records: ReadonlyArray<{ exchange: string }>, hostname: string): boolean {
  return records.some((r) => sameHost(r.exchange, hostname));
}

/**
 * True when the name's SPF policy authorizes our host: exactly one TXT record is an SPF record
 * (RFC 7208 4.5: none is "none", two or more are a permerror), and it holds a pass mechanism for
 * our host: `a:<hostname>` (optionally with a CIDR length) or `mx` (the MX we also require).
 */
export function spfAuthorizes(txt: readonly string[], hostname: string): boolean {
  const spf = txt.filter((t) => /^v=spf1(\s|$)/i.test(t.trim()));
  if (spf.length !== 1) return false;
  return spf[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .some((term) => {
      const m = /^\+?(a|mx)(?::([^/]+))?(?:\/\d+)*$/i.exec(term);
      if (!m) return false;
      if (m[1].toLowerCase() === 'mx') return m[2] === undefined;
      return m[2] !== undefined && sameHost(m[2], hostname);
    });
}
