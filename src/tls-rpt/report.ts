/**
 * The aggregate report of one UTC day for one policy domain (RFC 8460 4.4), its gzip form
 * (RFC 8460 5.1: application/tlsrpt+gzip) and its file name (RFC 8460 5.1).
 * Field names follow RFC 8460 4.3/4.4 and the example in 4.4.
 */
import { gzipSync } from 'node:zlib';
import type { PolicyCounts, TlsPolicy } from '../domain/tls-rpt.js';

export interface ReportMeta {
  organizationName: string;
  contactInfo: string;
  reportId: string;
  /** 'YYYY-MM-DD' (UTC). */
  day: string;
  policyDomain: string;
}

export interface TlsRptJson {
  'organization-name': string;
  'date-range': { 'start-datetime': string; 'end-datetime': string };
  'contact-info': string;
  'report-id': string;
  policies: {
    policy: { 'policy-type': TlsPolicy['type']; 'policy-string'?: string[]; 'policy-domain': string; 'mx-host'?: string };
    summary: { 'total-successful-session-count': number; 'total-failure-session-count': number };
    'failure-details'?: Record<string, string | number>[];
  }[];
}

export function buildReport(meta: ReportMeta, counts: readonly PolicyCounts[]): TlsRptJson {
  return {
    'organization-name': meta.organizationName,
    // The whole UTC day, written as RFC 8460 4.4's example writes it.
    'date-range': { 'start-datetime': `${meta.day}T00:00:00Z`, 'end-datetime': `${meta.day}T23:59:59Z` },
    'contact-info': meta.contactInfo,
    'report-id': meta.reportId,
    policies: counts.map((c) => policyEntry(meta.policyDomain, c)),
  };
}

function policyEntry(policyDomain: string, c: PolicyCounts): TlsRptJson['policies'][number] {
  const failed = c.failures.reduce((n, f) => n + f.count, 0);
  return {
    policy: {
      'policy-type': c.policy.type,
      ...(c.policy.string && c.policy.string.length > 0 && { 'policy-string': c.policy.string }),
      'policy-domain': policyDomain,
      ...(c.policy.mxHost && { 'mx-host': c.policy.mxHost }),
    },
    summary: { 'total-successful-session-count': c.success, 'total-failure-session-count': failed },
    ...(c.failures.length > 0 && {
      'failure-details': c.failures.map(({ failure: f, count }) => ({
        'result-type': f.type,
        ...(f.sendingMtaIp && { 'sending-mta-ip': f.sendingMtaIp }),
        ...(f.receivingMxHostname && { 'receiving-mx-hostname': f.receivingMxHostname }),
        ...(f.receivingIp && { 'receiving-ip': f.receivingIp }),
        'failed-session-count': count,
        ...(f.failureReasonCode && { 'failure-reason-code': f.failureReasonCode }),
      })),
    }),
  };
}

export function gzipReport(report: TlsRptJson): Buffer {
  return gzipSync(Buffer.from(JSON.stringify(report), 'utf8'));
}

/**
 * RFC 8460 5.1: filename = sender "!" policy-domain "!" begin-timestamp "!" end-timestamp
 * [ "!" unique-id ] "." extension, timestamps in seconds since the epoch; ".json.gz" when gzipped.
 */
export function reportFilename(sender: string, policyDomain: string, day: string, uniqueId: string): string {
  const begin = Date.parse(`${day}T00:00:00Z`) / 1000;
  const end = begin + 86_399;
  return `${sender}!${policyDomain}!${begin}!${end}!${uniqueId.replace(/[^A-Za-z0-9-]/g, '')}.json.gz`;
}
