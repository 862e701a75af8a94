/**
 * Warnings about the configuration that a domain's DNS records inherit. The records users are
 * told to publish name our host: the return-path MX (and the SPF `a:` mechanism) point at
 * `hostname`, the tracking and unsubscribe CNAMEs at the host of publicUrl. A record that cannot
 * work as published gets a warning naming the setting to change:
 * - a short name such as `vm` (the default on many machines) resolves nowhere else;
 * - an IP literal cannot be the target of an MX (RFC 5321 5.1: the exchange is a domain name; a
 *   dotted quad there is looked up as a name) or of a CNAME (RFC 1034 3.6.2: its data is a name);
 * - a loopback, private or link-local publicUrl (127.0.0.1 is the default) is where the links
 *   of mail lead: no reader reaches it, whatever the CNAME says.
 * They are computed from the current settings on every read (domains/service.ts), so they go
 * away, and come back, with the setting.
 */
import { isIP } from 'node:net';
import { isGloballyReachable } from './special-addresses.js';

export type SetupWarningCode =
  | 'hostname_not_fqdn'
  | 'link_host_not_fqdn'
  | 'link_host_ip_literal'
  | 'link_host_not_public'
  | 'dmarc_report_address_unset';

export interface SetupWarning {
  code: SetupWarningCode;
  /** The configuration key to change (its environment variable in `message`). */
  setting: 'hostname' | 'publicUrl' | 'domains.dmarcReportAddress';
  message: string;
}

const bare = (name: string) => name.replace(/\.$/, '').replace(/^\[|\]$/g, '');
const isIpLiteral = (name: string) => isIP(bare(name)) !== 0;
/** A name with no dot (and no IP address): what receivers' resolvers cannot find. */
const isShortName = (name: string) => !bare(name).includes('.') && !isIpLiteral(name);
/** `localhost` and names under it (RFC 6761 6.3) or an address no reader can reach. */
const isNotPublic = (name: string) => (isIpLiteral(name) ? !isGloballyReachable(bare(name)) : /(^|\.)localhost$/i.test(bare(name)));

/** The warnings of the return-path records (MX and SPF), which name `hostname`. */
export function returnPathWarnings(hostname: string): SetupWarning[] {
  if (!isShortName(hostname) && !isIpLiteral(hostname)) return [];
  const what = isIpLiteral(hostname) ? 'an IP address, which an MX record cannot name (RFC 5321 5.1)' : 'not a fully qualified domain name';
  return [
    {
      code: 'hostname_not_fqdn',
      setting: 'hostname',
      message: `The return-path MX record and SPF point at "${hostname}", which is ${what}; set hostname (POSTRIDER_HOSTNAME) to this host's name in DNS, restart, and verify the domain again.`,
    },
  ];
}

/** The warnings of the tracking and unsubscribe CNAMEs, which name the host of publicUrl. */
export function linkHostWarnings(o: { hostname: string; linkTarget: string }): SetupWarning[] {
  const { linkTarget } = o;
  const fix = `set publicUrl (POSTRIDER_PUBLIC_URL) to the public URL this API is reached at${linkTarget === o.hostname ? ', or fix hostname' : ''}`;
  const out: SetupWarning[] = [];
  if (isShortName(linkTarget)) {
    out.push({
      code: 'link_host_not_fqdn',
      setting: 'publicUrl',
      message: `The tracking and unsubscribe CNAME records point at "${linkTarget}" (the host of publicUrl), which is not a fully qualified domain name; ${fix}.`,
    });
  }
  if (isIpLiteral(linkTarget)) {
    out.push({
      code: 'link_host_ip_literal',
      setting: 'publicUrl',
      message: `The tracking and unsubscribe CNAME records point at "${linkTarget}" (the host of publicUrl), an IP address, which a CNAME cannot name (RFC 1034 3.6.2); ${fix} by its host name.`,
    });
  }
  if (isNotPublic(linkTarget)) {
    out.push({
      code: 'link_host_not_public',
      setting: 'publicUrl',
      message: `publicUrl's host "${linkTarget}" is a loopback or private address: the tracking and unsubscribe links of mail lead there, and no reader reaches it; ${fix}.`,
    });
  }
  return out;
}
