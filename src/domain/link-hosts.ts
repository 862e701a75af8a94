/**
 * Link hosts of a sending domain: `track.<domain>` and `unsub.<domain>` (labels configurable),
 * optional CNAME records pointing at the host of publicUrl. Once one is verified, the tracking
 * or unsubscribe links of that domain's new mail use it instead of publicUrl, so the link
 * domains align with the From domain (spam filters and readers distrust links to a foreign
 * host). They are not needed for the domain to be `verified`.
 */
import { sameHost, type ExpectedRecord } from './return-path.js';
import type { LinkHostKind, SendingDomain } from './sending-domain.js';
import { trimEndOf } from './trim-end.js';

export interface LinkHostLabels {
  trackingLabel: string;
  unsubscribeLabel: string;
}

export function linkHostRecords(o: LinkHostLabels & { domain: string; publicUrl: string }): Record<LinkHostKind, ExpectedRecord> {
  const target = new URL(o.publicUrl).hostname;
  return {
    tracking: { type: 'cname', host: `${o.trackingLabel}.${o.domain}`, value: target },
    unsubscribe: { type: 'cname', host: `${o.unsubscribeLabel}.${o.domain}`, value: target },
  };
}

/**
 * The base URL links of this kind use for mail from the domain: publicUrl with the host replaced
 * by the verified record's host (scheme, port and path stay: the CNAME reaches the same server),
 * or publicUrl itself. No trailing slash. A record verified for another publicUrl host (the
 * setting changed since) is not used: its CNAME leads to the old host, publicUrl to the new one.
 */
export function linkBaseUrl(publicUrl: string, d: Pick<SendingDomain, 'linkHosts'> | undefined, kind: LinkHostKind): string {
  const base = trimEndOf(publicUrl, '/');
  const record = d?.linkHosts?.[kind];
  if (!record || record.status !== 'verified' || !sameHost(record.value, new URL(base).hostname)) return base;
  const url = new URL(base);
  url.hostname = record.host;
  return trimEndOf(url.href, '/');
}
