/**
 * Which of our messages, and which of its recipients, a report (RFC 3464 DSN, RFC 5965 feedback
 * report) is about. Reports come from anyone, in many shapes: a feedback loop sends to a fixed
 * address and may leave out Original-Mail-From (optional, RFC 5965 3.2); a client submitting over
 * SMTP keeps its own Message-ID. So every key the report carries is tried, strongest first:
 *  1. a per-recipient bounce address `bounces+<messageId>-<mac>@…` (domain/verp.ts) in
 *     Original-Mail-From, in the embedded original's Return-Path (added by the receiver, RFC 5321
 *     4.4), or in the envelope the report came to: it names the message and exactly one of its
 *     recipients, and only that recipient's copy carried it (a forged or altered mac names none
 *     and counts as no key);
 *  2. the weaker keys, which name a message only: an old per-message address `bounces+<messageId>@…`
 *     (mail sent before per-recipient addresses) in the same places; our own Message-ID
 *     `<messageId@domain>` in the original's Message-ID field; the client's Message-ID as stored
 *     with the message (the store's messages.byClientMessageId), looked up only in the accounts that own the
 *     domain of the bounce host the report came to.
 * The Final-Recipient or Original-Rcpt-To a report names is never the tie: any recipient of a
 * message can write any address there (issue 29). What a weak key may act on is the processor's
 * call (processor.ts: only a message's single recipient).
 * Whatever the key, a message counts only if the report came to that message's own bounce host:
 * a report about one domain's mail is never taken from another domain's host.
 */
import { domainOf } from '../domain/address.js';
import { returnPathHost } from '../domain/return-path.js';
import type { MessageRecord } from '../domain/types.js';
import { parseVerp, verpRecipient } from '../domain/verp.js';
import { bareMessageId } from '../domain/message-id.js';
import type { StorePort } from '../store/port/index.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const OWN_ID = new RegExp(`^(${UUID})@`, 'i');

/** Every key a report offers for finding its message (absent ones left out). */
export interface ReportKeys {
  originalMailFrom?: string;
  /** The embedded original's Return-Path address. */
  returnPath?: string;
  /** The embedded original's Message-ID field, as written. */
  messageIdHeader?: string;
  /** The recipient the report names (Original-Rcpt-To, the original's To): picks among several messages with one client id. */
  recipient?: string;
}

export type MatchKey = 'original-mail-from' | 'return-path' | 'envelope' | 'message-id' | 'client-message-id';

/**
 * A matched message, with `recipient` when a per-recipient bounce address tied the report to
 * that one recipient; without it the report named the message only (a weaker key).
 */
export type Match = { message: MessageRecord; via: MatchKey; recipient?: string } | { message?: undefined; reason: 'no-key-matched' | 'ambiguous' };

export class ReportMatcher {
  constructor(private readonly deps: { store: StorePort; returnPathLabel: string }) {}

  async match(keys: ReportKeys, rcptTo: readonly string[]): Promise<Match> {
    const hosts = new Set(rcptTo.map(hostOf));
    const verps: Array<[MatchKey, string | undefined]> = [
      ['original-mail-from', keys.originalMailFrom],
      ['return-path', keys.returnPath],
      ...rcptTo.map((r): [MatchKey, string]  => ['envelope', r]),
    ];
    for (const [via, address] of verps) {
      const tied = await this.byRecipientVerp(address, hosts);
      if (tied) return { ...tied, via };
    }
    for (const [via, address] of verps) {
      const v = parseVerp(address);
      const message = v && !v.token ? await this.atHost(await this.deps.store.messages.get(v.messageId), hosts) : undefined;
      if (message) return { message, via };
    }
    const own = await this.byOwnMessageId(keys.messageIdHeader, hosts);
    if (own) return { message: own, via: 'message-id' };
    return this.byClientMessageId(keys, hosts);
  }

  /**
   * The message and recipient of a per-recipient bounce address at one of the hosts; undefined
   * when it is none, the message is gone, or the mac matches none of its recipients (forged).
   */
  async byRecipientVerp(address: string | undefined, hosts: ReadonlySet<string>): Promise<{ message: MessageRecord; recipient: string } | undefined> {
    const v = parseVerp(address);
    if (!v?.token) return undefined;
    const message = await this.atHost(await this.deps.store.messages.get(v.messageId), hosts);
    const recipient = message && verpRecipient(await this.deps.store.meta.trackingSecret(), message.id, v.token, message.recipients);
    return message && recipient ? { message, recipient } : undefined;
  }

  /** The message this daemon would send with this verbatim Message-ID (`<id@sender domain>`). */
  private async byOwnMessageId(header: string | undefined, hosts: ReadonlySet<string>): Promise<MessageRecord | undefined> {
    const bare = bareMessageId(header);
    const id = bare ? OWN_ID.exec(bare)?.[1] : undefined;
    const m = id ? await this.atHost(await this.deps.store.messages.get(id.toLowerCase()), hosts) : undefined;
    return m && bareMessageId(m.messageIdHeader)?.toLowerCase() === bare!.toLowerCase() ? m : undefined;
  }

  /**
   * By the client's Message-ID, in the accounts owning the bounce host's domain. A client may
   * reuse an id: the message sent to the named recipient wins, then the newest; the same id in
   * two accounts (both owning the domain) is ambiguous and matches nothing.
   */
  private async byClientMessageId(keys: ReportKeys, hosts: ReadonlySet<string>): Promise<Match> {
    if (!keys.messageIdHeader) return { reason: 'no-key-matched' };
    const found: MessageRecord[] = [];
    for (const accountId of await this.accountsOf(hosts)) {
      for (const id of await this.deps.store.messages.byClientMessageId(accountId, keys.messageIdHeader)) {
        const m = await this.atHost(await this.deps.store.messages.get(id), hosts);
        if (m) found.push(m);
      }
    }
    const named = keys.recipient ? found.filter((m) => m.recipients.includes(keys.recipient!)) : [];
    const pool = named.length > 0 ? named : found;
    if (pool.length === 0) return { reason: 'no-key-matched' };
    if (new Set(pool.map((m) => m.accountId)).size > 1) return { reason: 'ambiguous' };
    const newest = pool.reduce((a, b) => (b.createdAt > a.createdAt ? b : a));
    return { message: newest, via: 'client-message-id' };
  }

  /** Whether some account has a sending domain whose bounce host (`<label>.<domain>`) this is. */
  async ownsBounceHost(host: string): Promise<boolean> {
    const domains = this.bounceDomains([host]);
    if (domains.length === 0) return false;
    for (const a of await this.deps.store.accounts.list()) if (await this.ownsAny(a.id, domains)) return true;
    return false;
  }

  /** Accounts with a sending domain whose bounce host is one the report came to. */
  private async accountsOf(hosts: ReadonlySet<string>): Promise<string[]> {
    const domains = this.bounceDomains([...hosts]);
    if (domains.length === 0) return [];
    const owners: string[] = [];
    for (const a of await this.deps.store.accounts.list()) if (await this.ownsAny(a.id, domains)) owners.push(a.id);
    return owners;
  }

  /** The sending domains of the hosts that are bounce hosts (`<label>.<domain>`). */
  private bounceDomains(hosts: readonly string[]): string[] {
    const prefix = `${this.deps.returnPathLabel}.`;
    return hosts.filter((h) => h.startsWith(prefix)).map((h) => h.slice(prefix.length));
  }

  private async ownsAny(accountId: string, domains: readonly string[]): Promise<boolean> {
    for (const d of domains) if ((await this.deps.store.domains.findByName(accountId, d)) !== undefined) return true;
    return false;
  }

  /** The message, if one of the hosts is its own bounce host: a report (or unsubscribe) about one
   *  domain's mail, even of the same daemon, is never taken from another domain's host. A message
   *  of a deleted channel is no longer ours to act on (its suppressions went with the DELETE, and
   *  a row added before its purge reached the message would outlive it). */
  async atHost(m: MessageRecord | undefined, hosts: ReadonlySet<string>): Promise<MessageRecord | undefined> {
    if (!m || !hosts.has(returnPathHost(domainOf(m.from.email), this.deps.returnPathLabel))) return undefined;
    return (await this.deps.store.channels.isDeleted(m.channelId)) ? undefined : m;
  }
}

/** The host of an address, lower-cased and without the root dot (`a@Example.ORG.` -> `example.org`). */
export function hostOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase().replace(/\.$/, '');
}
