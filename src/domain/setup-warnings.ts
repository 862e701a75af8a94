/**
 * Warnings about the configuration that a domain's DNS records inherit. The records users are
 * told to publish name our host: the return-path MX (and the SPF `a:` mechanism) point at
 * `hostname`, the tracking and unsubscribe CNAMEs at the host of publicUrl. A short name such as
 * `vm` (the default on many machines) resolves nowhere else, so those records are useless until
 * the setting is fixed; POST /domains and GET /domains/{id} say so while it lasts.
 */
import { isIP } from 'node:net';

export interface SetupWarning {
  code: 'hostname_not_fqdn' | 'link_host_not_fqdn' | 'dmarc_report_address_unset';
  /** The configuration key to change (its environment variable in `message`). */
  setting: 'hostname' | 'publicUrl' | 'domains.dmarcReportAddress';
  message: string;
}

/** A name with no dot (and no IP address): what receivers' resolvers cannot find. */
const isShortName = (name: string) => !name.replace(/\.$/, '').includes('.') && isIP(name.replace(/^\[|\]$/g, '')) === 0;

export function setupWarnings(o: { hostname: string; linkTarget: string }): SetupWarning[] {
  const out: SetupWarning[] = [];
  if (isShortName(o.hostname)) {
    out.push({
      code: 'hostname_not_fqdn',
      setting: 'hostname',
      message: `The return-path MX record and SPF point at "${o.hostname}", which is not a fully qualified domain name; set hostname (POSTRIDER_HOSTNAME) to this host's name in DNS, restart, and verify the domain again.`,
    });
  }
  if (isShortName(o.linkTarget)) {
    out.push({
      code: 'link_host_not_fqdn',
      setting: 'publicUrl',
      message: `The tracking and unsubscribe CNAME records point at "${o.linkTarget}" (the host of publicUrl), which is not a fully qualified domain name; set publicUrl (POSTRIDER_PUBLIC_URL) to the URL this API is reached at${o.linkTarget === o.hostname ? ', or fix hostname' : ''}.`,
    });
  }
  return out;
}
