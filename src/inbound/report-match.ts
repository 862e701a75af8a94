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
 *     with the message (store/client-message-ids.ts), looked up only in the accounts that own the
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
import { listAccounts } from '../store/lmdb/accounts.js';
import { isChannelDeleted } from '../store/lmdb/channel-records.js';
import { bareMessageId, messagesByClientMessageId } from '../store/lmdb/client-message-ids.js';
import { findDomainByName } from '../store/lmdb/domains.js';
import type { LmdbStore } from '../store/lmdb/engine.js';
import { getMessage } from '../store/lmdb/messages.js';
import { trackingSecret } from '../store/lmdb/secrets.js';

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
  constructor(private readonly deps: { store: LmdbStore; returnPathLabel: string }) {}

  match(keys: ReportKeys, rcptTo: readonly string[]): Match {
    const hosts = new Set(rcptTo.map(hostOf));
    const verps: Array<[MatchKey, string | undefined]> = [
      ['original-mail-from', keys.originalMailFrom],
      ['return-path', keys.returnPath],
      ...rcptTo.map((r): [MatchKey, string]  => ['envelope', r]),
    ];
    for (const [via, address] of verps) {
      const tied = this.byRecipientVerp(address, hosts);
      if (tied) return { ...tied, via };
    }
    for (const [via, address] of verps) {
      const v = parseVerp(address);
      const message = v && !v.token ? this.atHost(getMessage(this.deps.store, v.messageId), hosts) : undefined;
      if (message) return { message, via };
    }
    const own = this.byOwnMessageId(keys.messageIdHeader, hosts);
    if (own) return { message: own, via: 'message-id' };
    return this.byClientMessageId(keys, hosts);
  }

  /**
   * The message and recipient of a per-recipient bounce address at one of the hosts; undefined
   * when it is none, the message is gone, or the mac matches none of its recipients (forged).
   */
  byRecipientVerp(address: string | undefined, hosts: ReadonlySet<string>): { message: MessageRecord; recipient: string } | undefined {
    const v = parseVerp(address);
    if (!v?.token) return undefined;
    const message = this.atHost(getMessage(this.deps.store, v.messageId), hosts);
    const recipient = message && verpRecipient(trackingSecret(this.deps.store), message.id, v.token, message.recipients);
    return message && recipient ? { message, recipient } : undefined;
  }

  /** The message this daemon would send with this verbatim Message-ID (`<id@sender domain>`). */
  private byOwnMessageId(header: string | undefined, hosts: ReadonlySet<string>): MessageRecord | undefined {
    const bare = bareMessageId(header);
    const id = bare ? OWN_ID.exec(bare)?.[1] : undefined;
    const m = id ? this.atHost(getMessage(this.deps.store, id.toLowerCase()), hosts) : undefined;
    return m && bareMessageId(m.messageIdHeader)?.toLowerCase() === bare!.toLowerCase() ? m : undefined;
  }

  /**
   * By the client's Message-ID, in the accounts owning the bounce host's domain. A client may
   * reuse an id: the message sent to the named recipient wins, then the newest; the same id in
   * two accounts (both owning the domain) is ambiguous and matches nothing.
   */
  private byClientMessageId(keys: ReportKeys, hosts: ReadonlySet<string>): Match {
    if (!keys.messageIdHeader) return { reason: 'no-key-matched' };
    const found: MessageRecord[] = [];
    for (const accountId of this.accountsOf(hosts)) {
      for (const id of messagesByClientMessageId(this.deps.store, accountId, keys.messageIdHeader)) {
        const m = this.atHost(getMessage(this.deps.store, id), hosts);
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
  ownsBounceHost(host: string): boolean {
    const domains = this.bounceDomains([host]);
    return listAccounts(this.deps.store).some((a) => this.ownsAny(a.id, domains));
  }

  /** Accounts with a sending domain whose bounce host is one the report came to. */
  private accountsOf(hosts: ReadonlySet<string>): string[] {
    const domains = this.bounceDomains([...hosts]);
    return listAccounts(this.deps.store)
      .filter((a) => this.ownsAny(a.id, domains))
      .map((a) => a.id);
  }

  /** The sending domains of the hosts that are bounce hosts (`<label>.<domain>`). */
  private bounceDomains(hosts: readonly string[]): string[] {
    const prefix = `${this.deps.returnPathLabel}.`;
    return hosts.filter((h) => h.startsWith(prefix)).map((h) => h.slice(prefix.length));
  }

  private ownsAny(accountId: string, domains: readonly string[]): boolean {
    return domains.some((d) => findDomainByName(this.deps.store, accountId, d) !== undefined);
  }

  /** The message, if one of the hosts is its own bounce host: a report (or unsubscribe) about one
   *  domain's mail, even of the same daemon, is never taken from another domain's host. A message
   *  of a deleted channel is no longer ours to act on (its suppressions went with the DELETE, and
   *  a row added before its purge reached the message would outlive it). */
  atHost(m: MessageRecord | undefined, hosts: ReadonlySet<string>): MessageRecord | undefined {
    if (!m || isChannelDeleted(this.deps.store, m.channelId)) return undefined;
    return hosts.has(returnPathHost(domainOf(m.from.email), this.deps.returnPathLabel)) ? m : undefined;
  }
}

/** The host of an address, lower-cased and without the root dot (`a@Example.ORG.` -> `example.org`). */
export function hostOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase().replace(/\.$/, '');
}
