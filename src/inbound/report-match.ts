/**
 * Which of our messages a report (RFC 3464 DSN, RFC 5965 feedback report) is about. Reports come
 * in many shapes: a feedback loop sends to a fixed address and may leave out Original-Mail-From
 * (optional, RFC 5965 3.2); a client submitting over SMTP keeps its own Message-ID. So every key
 * the report carries is tried, most specific first:
 *  1. a VERP address `bounces+<messageId>@…` (delivery/return-path.ts) in Original-Mail-From,
 *     in the embedded original's Return-Path (added by the receiver, RFC 5321 4.4), or in the
 *     envelope the report came to;
 *  2. our own Message-ID `<messageId@domain>` in the original's Message-ID field;
 *  3. the client's Message-ID as stored with the message (store/client-message-ids.ts), looked up
 *     only in the accounts that own the domain of the bounce host the report came to.
 * Whatever the key, a message counts only if the report came to that message's own bounce host:
 * a report about one domain's mail is never taken from another domain's host.
 */
import { domainOf } from '../domain/address.js';
import { returnPathHost } from '../domain/return-path.js';
import type { MessageRecord } from '../domain/types.js';
import { listAccounts } from '../store/accounts.js';
import { bareMessageId, messagesByClientMessageId } from '../store/client-message-ids.js';
import { findDomainByName } from '../store/domains.js';
import type { Store } from '../store/env.js';
import { getMessage } from '../store/messages.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const VERP = new RegExp(`^bounces\\+(${UUID})$`, 'i');
const OWN_ID = new RegExp(`^(${UUID})@`, 'i');

/** The message id of a VERP address (or its local part), if it is one. */
export function verpMessageId(address: string | undefined): string | undefined {
  if (!address) return undefined;
  const local = address.includes('@') ? address.slice(0, address.lastIndexOf('@')) : address;
  return VERP.exec(local.replace(/^</, ''))?.[1]?.toLowerCase();
}

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

export type Match = { message: MessageRecord; via: MatchKey } | { message?: undefined; reason: 'no-key-matched' | 'ambiguous' };

export class ReportMatcher {
  constructor(private readonly deps: { store: Store; returnPathLabel: string }) {}

  match(keys: ReportKeys, rcptTo: readonly string[]): Match {
    const hosts = new Set(rcptTo.map(hostOf));
    const verps: Array<[MatchKey, string | undefined]> = [
      ['original-mail-from', verpMessageId(keys.originalMailFrom)],
      ['return-path', verpMessageId(keys.returnPath)],
      ...rcptTo.map((r): [MatchKey, string | undefined] => ['envelope', verpMessageId(r)]),
    ];
    for (const [via, id] of verps) {
      const message = id ? this.atHost(getMessage(this.deps.store, id), hosts) : undefined;
      if (message) return { message, via };
    }
    const own = this.byOwnMessageId(keys.messageIdHeader, hosts);
    if (own) return { message: own, via: 'message-id' };
    return this.byClientMessageId(keys, hosts);
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
   *  domain's mail, even of the same daemon, is never taken from another domain's host. */
  atHost(m: MessageRecord | undefined, hosts: ReadonlySet<string>): MessageRecord | undefined {
    return m && hosts.has(returnPathHost(domainOf(m.from.email), this.deps.returnPathLabel)) ? m : undefined;
  }
}

/** The host of an address, lower-cased and without the root dot (`a@Example.ORG.` -> `example.org`). */
export function hostOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase().replace(/\.$/, '');
}
