/**
 * Engagement links, applied in the worker while building a message and before DKIM signing:
 * the unsubscribe URL (List-Unsubscribe, RFC 2369 / RFC 8058, and the `{{{unsubscribe}}}`
 * template variable), click tracking (http(s) links of the html part point at the redirect
 * endpoint through a signed token that covers the target URL) and open tracking (a 1x1 image
 * at the end of the html part). The text part is left as written: rewriting bare URLs in plain
 * text makes them long and unreadable, and clients rarely render them as links anyway.
 */
import { MAX_URL_LENGTH } from '../domain/request-target.js';
import { signToken, unsubscribeLocalPart } from '../domain/tracking-token.js';
import { replaceHrefs } from './href-attributes.js';

export interface EngagementInput {
  /** Base of tracking links, without trailing slash: publicUrl, or the From domain's verified tracking host. */
  baseUrl: string;
  /** Base of the unsubscribe URL, likewise (its own host: domain/link-hosts.ts). Absent: baseUrl. */
  unsubscribeBaseUrl?: string;
  /** The HMAC key (hex), from the store. */
  secret: string;
  messageId: string;
  channelId: string;
  /** The single envelope recipient, or '' when the message has several (tracking-token.ts). */
  recipient: string;
  opens: boolean;
  links: boolean;
  /** Broadcast mail: List-Unsubscribe, and `unsubscribe` in the template data. */
  unsubscribe?: {
    /** Host of the mailto alternative (the return-path host); absent: URL only. */
    mailtoHost?: string;
  };
}

export interface EngagementUrls {
  unsubscribeUrl?: string;
  unsubscribeMailto?: string;
}

export function engagementUrls(e: EngagementInput): EngagementUrls {
  if (!e.unsubscribe) return {};
  const secret = Buffer.from(e.secret, 'hex');
  const token = signToken(secret, { kind: 'unsubscribe', messageId: e.messageId, recipient: e.recipient, channelId: e.channelId });
  const out: EngagementUrls = { unsubscribeUrl: `${e.unsubscribeBaseUrl ?? e.baseUrl}/unsubscribe?token=${token}` };
  if (e.unsubscribe.mailtoHost) {
    out.unsubscribeMailto = `mailto:${unsubscribeLocalPart(secret, e.messageId)}@${e.unsubscribe.mailtoHost}?subject=unsubscribe`;
  }
  return out;
}

/** Links of one message rewritten for click tracking at most; the rest stay as written. */
export const MAX_TRACKED_LINKS = 10_000;

/** Rewrites links (the first MAX_TRACKED_LINKS) and appends the open pixel as the channel or message asks. */
export function trackHtml(html: string, e: EngagementInput): string {
  const secret = Buffer.from(e.secret, 'hex');
  let out = html;
  if (e.links) {
    let tracked = 0;
    // An <a> start tag's href attribute, quoted with " or ' (unquoted values are left alone).
    out = replaceHrefs(out, ({ whole, start, quote, value }) => {
      // Past the cap the links stay as written, not even read: no message needs more, and each
      // costs a URL parse and a signature (1.7 million links of a 40 MiB body held a worker 16 s).
      if (tracked >= MAX_TRACKED_LINKS) return null;
      const url = decodeAttr(value.trim());
      // Only web links; mailto:, tel:, anchors and our own links (unsubscribe) stay as they are.
      if (!/^https?:\/\//i.test(url) || url.startsWith(`${e.baseUrl}/`) || url.startsWith(`${e.unsubscribeBaseUrl ?? e.baseUrl}/`)) return whole;
      let href: string;
      try {
        href = new URL(url).href; // the exact string that is signed and later redirected to
      } catch {
        return whole;
      }
      const token = signToken(secret, { kind: 'click', messageId: e.messageId, recipient: e.recipient, url: href });
      const link = `${e.baseUrl}/t/click?token=${token}`;
      // The token holds the URL, a third longer: a link that long stays as written, as the
      // tracking URL would be refused (414) when clicked. Its origin counted too: a safe margin.
      if (link.length > MAX_URL_LENGTH) return whole;
      tracked++;
      return `${start}${quote}${link}${quote}`;
    });
  }
  if (e.opens) {
    const token = signToken(secret, { kind: 'open', messageId: e.messageId, recipient: e.recipient });
    const pixel = `<img src="${e.baseUrl}/t/open?token=${token}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0">`;
    const close = out.search(/<\/body\s*>/i);
    out = close >= 0 ? out.slice(0, close) + pixel + out.slice(close) : out + pixel;
  }
  return out;
}

/** The character references an href commonly holds (HTML 13.1.4); enough for URLs. */
function decodeAttr(v: string): string {
  return v
    .replace(/&amp;/gi, '&')
    .replace(/&#0*38;/g, '&')
    .replace(/&#x0*26;/gi, '&')
    .replace(/&quot;/gi, '"')
    .replace(/&#0*39;/g, "'");
}
