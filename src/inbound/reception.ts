/**
 * What the inbound listener (listener.ts, the adapter) asks when mail arrives, one verb per SMTP
 * step: which recipients it may accept, and what becomes of an accepted message.
 *
 *  - A recipient is accepted where an enabled inbound route matches it (issue 33: exact address,
 *    then plus-addressing, then the catch-all), or where it is an address of our bounce hosts
 *    (processor.ts). `postmaster@domain` that no enabled route matches goes to the domain's
 *    oldest enabled route (RFC 5321 4.5.1: every domain whose mail we receive must take mail for
 *    its postmaster; the domain's owner gets it).
 *  - Everything else is refused with 550 5.1.1, postmaster@ of a domain without an enabled route
 *    too: the listener is never a relay (RFC 5321 7.1). `RCPT TO:<postmaster>` without a domain
 *    as well: RFC 5321 4.1.1.3 wants it accepted for the host itself, which keeps no mailbox here
 *    (out of scope for now; docs/smtp-submission.md says so).
 *  - The copies for routes are committed, raw bytes and envelope, one record per route, before
 *    the listener answers 250 (RFC 5321 6.1: once it has said 250 the message is ours); their
 *    processing and POST come after the 250, in the background. Mail for the bounce hosts is
 *    processed as before (DSN, ARF, List-Unsubscribe).
 */
import { normalizeEmail } from '../domain/address.js';
import { postmasterDomain, type InboundRoute } from '../domain/inbound-route.js';
import type { NewInboundMessage } from '../domain/inbound-message.js';
import type { StorePort } from '../store/port/index.js';
import { headerSummary } from './header-summary.js';
import type { InboundProcessor, Outcome } from './processor.js';

/** Why a recipient was accepted: a route (with the mailbox hash it matched with), or a bounce host. */
export type Acceptance = { kind: 'route'; route: InboundRoute; mailboxHash: string | null } | { kind: 'bounce' };

export interface AcceptedRecipient {
  address: string;
  acceptance: Acceptance;
}

export interface Reception {
  mailFrom: string;
  recipients: AcceptedRecipient[];
  raw: Buffer;
  clientAddress: string;
  helo: string;
  receivedAt: Date;
}

export interface ReceptionResult {
  /** The committed copies, one per route. */
  messageIds: string[];
  /** What the bounce hosts' part became, when there was one. */
  report?: Outcome;
}

export interface ReceptionDeps {
  store: Pick<StorePort, 'inboundRoutes' | 'inboundMessages'>;
  bounces: Pick<InboundProcessor, 'accepts' | 'process'>;
  /** Called after routed copies committed: processing may start at once. */
  committed?: () => void;
}

export class InboundReception {
  constructor(private readonly deps: ReceptionDeps) {}

  /** RCPT TO: the reason to accept the recipient, or null to refuse it. */
  async accept(recipient: string): Promise<Acceptance | null> {
    const n = normalizeEmail(recipient);
    if (!('problem' in n)) {
      const m = await this.deps.store.inboundRoutes.match(n.email);
      // A disabled route receives nothing: its addresses are refused like unrouted ones.
      if (m?.route.enabled) return { kind: 'route', route: m.route, mailboxHash: m.mailboxHash };
      const postmaster = postmasterDomain(n.email);
      // RFC 5321 4.5.1: a disabled postmaster route (or catch-all) does not refuse it either.
      const owner = postmaster === null ? undefined : await this.deps.store.inboundRoutes.oldestEnabledOnDomain(postmaster);
      if (owner) return { kind: 'route', route: owner, mailboxHash: null };
    }
    return (await this.deps.bounces.accepts(recipient)) ? { kind: 'bounce' } : null;
  }

  /** DATA: commits the routed copies (durable when this resolves), then processes the bounce hosts' part. */
  async receive(r: Reception): Promise<ReceptionResult> {
    const copies = routedCopies(r);
    const result: ReceptionResult = { messageIds: [] };
    if (copies.length > 0) {
      const made = await this.deps.store.inboundMessages.commit({ receivedAt: r.receivedAt, raw: r.raw, messages: copies });
      result.messageIds = made.map((m) => m.id);
      this.deps.committed?.();
    }
    const reports = r.recipients.filter((x) => x.acceptance.kind === 'bounce').map((x) => x.address);
    if (reports.length > 0) result.report = await this.deps.bounces.process({ mailFrom: r.mailFrom, rcptTo: reports }, r.raw);
    return result;
  }
}

/** One copy per route, with that route's recipients; the mailbox hash of its first recipient that has one. */
function routedCopies(r: Reception): NewInboundMessage[] {
  const byRoute = new Map<string, { route: InboundRoute; rcptTo: string[]; mailboxHash: string | null }>();
  for (const { address, acceptance: a } of r.recipients) {
    if (a.kind !== 'route') continue;
    const entry = byRoute.get(a.route.id) ?? { route: a.route, rcptTo: [], mailboxHash: null };
    entry.rcptTo.push(address);
    entry.mailboxHash ??= a.mailboxHash;
    byRoute.set(a.route.id, entry);
  }
  if (byRoute.size === 0) return [];
  const summary = headerSummary(r.raw);
  return [...byRoute.values()].map(({ route, rcptTo, mailboxHash }) => ({
    routeId: route.id,
    accountId: route.accountId,
    channelId: route.channelId,
    envelope: { mailFrom: r.mailFrom, rcptTo },
    clientAddress: r.clientAddress,
    helo: r.helo,
    mailboxHash,
    ...summary,
  }));
}
