/**
 * Admission of SMTP connections. RFC 5321 3.1 lets a server refuse a connection with a 421
 * reply instead of the greeting when it cannot serve it; this decides when:
 *
 *  - at most smtp.maxConnectionsPerAddress from one client address, so that one address (idle
 *    or trickling connections) cannot take the listener;
 *  - at most smtp.maxConnections sessions in all, of which sessions that have not authenticated
 *    may fill only maxConnections - authenticatedReserve, so that a flood of unauthenticated
 *    connections leaves room for clients that have authenticated;
 *  - when that room is full, a newcomer from an address holding fewer unauthenticated sessions
 *    takes the oldest unauthenticated session of the address holding the most (by at least two
 *    more), so that a flood from many addresses cannot starve a client that is not part of it.
 *
 * Pure bookkeeping (no sockets, no timers): the listener asks before it creates a session,
 * closes the session it is told to evict, and reports AUTH and close.
 */
import type { SmtpReplyName } from './replies.js';

export interface GateLimits {
  maxConnections: number;
  maxConnectionsPerAddress: number;
  authenticatedReserve: number;
}

/** One admitted connection; the caller keeps it to report AUTH and close. */
export interface GateTicket {
  readonly address: string;
  authenticated: boolean;
  open: boolean;
}

export interface Admission {
  ticket: GateTicket;
  /** A session that must be closed to make room for this one. */
  evicted?: GateTicket;
}

export class ConnectionGate {
  private readonly perAddress = new Map<string, number>();
  /** Unauthenticated tickets per address, oldest first. */
  private readonly waiting = new Map<string, GateTicket[]>();
  private total = 0;
  private unauthenticated = 0;

  constructor(private readonly limits: GateLimits) {}

  /** Admits a connection from `address`, or names the reply that refuses it. */
  open(address: string): Admission | SmtpReplyName {
    if ((this.perAddress.get(address) ?? 0) >= this.limits.maxConnectionsPerAddress) return 'tooManyFromAddress';
    let evicted: GateTicket | undefined;
    if (this.total >= this.limits.maxConnections || this.unauthenticated >= this.unauthenticatedLimit()) {
      evicted = this.victimFor(address);
      if (!evicted) return 'listenerFull';
      this.close(evicted);
    }
    const ticket: GateTicket = { address, authenticated: false, open: true };
    this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    this.waiting.set(address, [...(this.waiting.get(address) ?? []), ticket]);
    this.total++;
    this.unauthenticated++;
    return evicted ? { ticket, evicted } : { ticket };
  }

  /** AUTH succeeded: the session moves into the room kept for authenticated clients. */
  authenticated(t: GateTicket): void {
    if (!t.open || t.authenticated) return;
    t.authenticated = true;
    this.unauthenticated--;
    this.unwait(t);
  }

  /** STARTTLS forgets an earlier AUTH (RFC 3207 4.2): the session counts as unauthenticated again. */
  unauthenticatedAgain(t: GateTicket): void {
    if (!t.open || !t.authenticated) return;
    t.authenticated = false;
    this.unauthenticated++;
    this.waiting.set(t.address, [...(this.waiting.get(t.address) ?? []), t]);
  }

  /** Idempotent: a session may be reported closed by more than one path. */
  close(t: GateTicket): void {
    if (!t.open) return;
    t.open = false;
    this.total--;
    if (!t.authenticated) {
      this.unauthenticated--;
      this.unwait(t);
    }
    const n = (this.perAddress.get(t.address) ?? 1) - 1;
    if (n <= 0) this.perAddress.delete(t.address);
    else this.perAddress.set(t.address, n);
  }

  get counts(): { total: number; unauthenticated: number; addresses: number } {
    return { total: this.total, unauthenticated: this.unauthenticated, addresses: this.perAddress.size };
  }

  /** The oldest unauthenticated ticket of the address that holds at least two more than `address`. */
  private victimFor(address: string): GateTicket | undefined {
    const own = this.waiting.get(address)?.length ?? 0;
    let most: GateTicket[] | undefined;
    for (const list of this.waiting.values()) if (!most || list.length > most.length) most = list;
    return most && most.length > own + 1 ? most[0] : undefined;
  }

  private unwait(t: GateTicket): void {
    const list = (this.waiting.get(t.address) ?? []).filter((x) => x !== t);
    if (list.length > 0) this.waiting.set(t.address, list);
    else this.waiting.delete(t.address);
  }

  /** At least one slot, whatever the reserve, so a misconfigured reserve cannot close the door. */
  private unauthenticatedLimit(): number {
    return Math.max(1, this.limits.maxConnections - this.limits.authenticatedReserve);
  }
}
