/**
 * What the worker needs to add engagement links to one message (workers/engagement.ts): the
 * public base URL, the HMAC key, and which of open tracking, click tracking and unsubscribe
 * apply. Broadcast mail always gets List-Unsubscribe (RFC 2369 3.2, one-click per RFC 8058);
 * its mailto alternative points at the return-path host only when the inbound listener runs to
 * receive it. See domain/tracking-token.ts for why a token names a recipient only when the
 * message has exactly one. Links use the From domain's own tracking or unsubscribe host once its
 * CNAME is verified (domain/link-hosts.ts), the effective publicUrl otherwise (domain/public-url.ts).
 */
import { domainOf } from '../domain/address.js';
import { linkBaseUrl } from '../domain/link-hosts.js';
import { returnPathHost } from '../domain/return-path.js';
import type { MailType, Tracking } from '../domain/types.js';
import { getChannelRecord } from '../store/lmdb/channels.js';
import { findDomainByName } from '../store/lmdb/domains.js';
import { trackingSecret } from '../store/lmdb/secrets.js';
import type { EngagementInput } from '../workers/engagement.js';
import type { SubmissionDeps } from './deps.js';

export function engagementFor(
  deps: Pick<SubmissionDeps, 'store' | 'config' | 'publicUrl'>,
  m: { messageId: string; channelId: string; mailType: MailType; tracking: Tracking; recipients: string[]; from: string },
): EngagementInput | undefined {
  const broadcast = m.mailType === 'broadcast';
  if (!broadcast && !m.tracking.opens && !m.tracking.links) return undefined;
  const { config } = deps;
  const accountId = getChannelRecord(deps.store, m.channelId)?.accountId;
  const domain = accountId ? findDomainByName(deps.store, accountId, domainOf(m.from).toLowerCase()) : undefined;
  const e: EngagementInput = {
    baseUrl: linkBaseUrl(deps.publicUrl.value, domain, 'tracking'),
    unsubscribeBaseUrl: linkBaseUrl(deps.publicUrl.value, domain, 'unsubscribe'),
    secret: trackingSecret(deps.store).toString('hex'),
    messageId: m.messageId,
    channelId: m.channelId,
    recipient: m.recipients.length === 1 ? m.recipients[0] : '',
    opens: m.tracking.opens,
    links: m.tracking.links,
  };
  if (broadcast) {
    e.unsubscribe = config.inbound.enabled ? { mailtoHost: returnPathHost(domainOf(m.from), config.domains.returnPathLabel) } : {};
  }
  return e;
}
