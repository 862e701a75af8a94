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
import type { SendingDomain } from '../domain/sending-domain.js';
import type { MailType, Tracking } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';
import type { EngagementInput } from '../workers/engagement.js';
import type { SubmissionDeps } from './deps.js';

export interface EngagementMessage {
  messageId: string;
  channelId: string;
  mailType: MailType;
  tracking: Tracking;
  recipients: string[];
  from: string;
}

type EngagementSettings = Pick<SubmissionDeps, 'config' | 'publicUrl'>;

/** What the worker adds to the message, or undefined when it adds nothing (no tracking, not a broadcast). */
export async function engagementOf(
  deps: EngagementSettings & { store: Pick<StorePort, 'channels' | 'domains' | 'meta'> },
  m: EngagementMessage,
): Promise<EngagementInput | undefined> {
  if (!wantsEngagement(m)) return undefined;
  const accountId = (await deps.store.channels.getRecord(m.channelId))?.accountId;
  const domain = accountId ? await deps.store.domains.findByName(accountId, domainOf(m.from).toLowerCase()) : undefined;
  return engagementInput(deps, m, domain, await deps.store.meta.trackingSecret());
}

function wantsEngagement(m: EngagementMessage): boolean {
  return m.mailType === 'broadcast' || m.tracking.opens || m.tracking.links;
}

/** The input itself, from the From domain as stored (its verified link hosts) and the HMAC key. */
function engagementInput(deps: EngagementSettings, m: EngagementMessage, domain: SendingDomain | undefined, secret: Buffer): EngagementInput {
  const { config } = deps;
  const e: EngagementInput = {
    baseUrl: linkBaseUrl(deps.publicUrl.value, domain, 'tracking'),
    unsubscribeBaseUrl: linkBaseUrl(deps.publicUrl.value, domain, 'unsubscribe'),
    secret: secret.toString('hex'),
    messageId: m.messageId,
    channelId: m.channelId,
    recipient: m.recipients.length === 1 ? m.recipients[0] : '',
    opens: m.tracking.opens,
    links: m.tracking.links,
  };
  if (m.mailType === 'broadcast') {
    e.unsubscribe = config.inbound.enabled ? { mailtoHost: returnPathHost(domainOf(m.from), config.domains.returnPathLabel) } : {};
  }
  return e;
}
