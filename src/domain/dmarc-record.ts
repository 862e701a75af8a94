/**
 * The DMARC record (RFC 7489) recommended for a sending domain: a TXT at `_dmarc.<domain>` with
 * `p=none` (monitoring: receivers act on nothing, but report), and `rua=mailto:<address>` when the
 * operator configured a report address (domains.dmarcReportAddress). Gmail, Yahoo and Microsoft
 * require a DMARC record of bulk senders (2024-2025); p=none is enough for them.
 *
 * Advisory: the record is checked and its status shown, but it never decides whether the domain
 * is verified (sending-domain.ts). Our DKIM signature's d= is the From domain, so DKIM aligns
 * (RFC 7489 3.1.1) whatever policy the domain publishes.
 *
 * A domain that already publishes a DMARC record keeps it: any record that starts with
 * `v=DMARC1` counts as present, and the answer shows the published value. A domain without one
 * of its own falls back to its Organizational Domain's (RFC 7489 6.6.3; domains/checks.ts, the
 * Public Suffix List through tldts): the answer then shows that record, at its host, and says
 * it is inherited (dmarcInheritedFrom).
 */
import type { ExpectedRecord } from './return-path.js';
import type { DnsRecordState } from './sending-domain.js';
import type { SetupWarning } from './setup-warnings.js';

/** RFC 7489 6.1: the policy of domain d is the TXT record at _dmarc.d. */
export function dmarcHost(domain: string): string {
  return `_dmarc.${domain}`;
}

/**
 * The Organizational Domain whose record applies to `domain` (RFC 7489 6.6.3), when the DMARC
 * record found is not at the domain's own _dmarc host; undefined when it is the domain's own
 * (or ours, recommended).
 */
export function dmarcInheritedFrom(domain: string, record: Pick<DnsRecordState, 'host'>): string | undefined {
  const prefix = dmarcHost('');
  return record.host !== dmarcHost(domain) && record.host.startsWith(prefix) ? record.host.slice(prefix.length) : undefined;
}

/** The record we recommend: `v=DMARC1; p=none`, with `rua` when a report address is configured. */
export function dmarcRecord(domain: string, reportAddress: string): ExpectedRecord {
  const rua = reportAddress.trim() === '' ? '' : `; rua=mailto:${reportAddress.trim()}`;
  return { type: 'txt', host: dmarcHost(domain), value: `v=DMARC1; p=none${rua}` };
}

/**
 * RFC 7489 6.4: the v tag comes first and its value is exactly "DMARC1" (a case-sensitive
 * literal in the ABNF; the tag name is not). Anything else at _dmarc is not a DMARC record.
 */
export function isDmarcRecord(txt: string): boolean {
  return /^[vV][ \t]*=[ \t]*DMARC1[ \t]*(;|$)/.test(txt.trim());
}

/**
 * The DMARC record a domain publishes among the TXT records at its _dmarc host (each already
 * joined from its character-strings, RFC 7208 3.3 style), or undefined. RFC 7489 6.6.3: records
 * that are not DMARC are discarded, and when more than one DMARC record remains receivers apply
 * no DMARC at all, so two count as none.
 */
export function publishedDmarc(txt: readonly string[]): string | undefined {
  const records = txt.filter(isDmarcRecord);
  return records.length === 1 ? records[0].trim() : undefined;
}

/**
 * Said with a domain's records while we recommend our record (the domain publishes none) and it
 * has no rua: a p=none record without reports is accepted by the mailbox providers but tells
 * nobody what fails.
 */
export function dmarcWarnings(record: Pick<DnsRecordState, 'status'>, reportAddress: string): SetupWarning[] {
  if (reportAddress.trim() !== '' || record.status === 'verified') return [];
  return [
    {
      code: 'dmarc_report_address_unset',
      setting: 'domains.dmarcReportAddress',
      message:
        'The recommended DMARC record has no report address (rua), so nobody receives the aggregate reports of what passes and fails; set domains.dmarcReportAddress (POSTRIDER_DOMAINS_DMARC_REPORT_ADDRESS) to a mailbox that collects them, or publish your own DMARC record.',
    },
  ];
}
