/**
 * The live sessions of the SMTP listener and their life cycle around the protocol:
 *
 *  - admission through the ConnectionGate (total, per-address and unauthenticated caps, and
 *    the eviction that keeps a flood from many addresses from starving other clients);
 *  - the AUTH deadline: a session has smtp.authTimeoutMs from connect to a successful AUTH.
 *    It is a deadline, not an idle timeout, so trickling a byte every few seconds does not
 *    keep an unauthenticated connection (RFC 6409 4.3: a submission server requires AUTH, so a
 *    session without it has nothing to wait for). After AUTH the idle timeout is
 *    smtp.idleTimeoutMs (RFC 5321 4.5.3.2.7: at least 5 minutes);
 *  - the drain on shutdown: new commands get 421 4.3.2 and the session closes (RFC 5321 3.8),
 *    idle sessions are closed at once, a message being received or committed finishes and
 *    gets its reply first, and whatever is left when the grace time ends is cut.
 */
import { ConnectionGate, type GateLimits, type GateTicket } from './connection-gate.js';
import { smtpReply, type SmtpReplyError } from './replies.js';
import type { WireHooks, WireSession } from './wire-server.js';

export interface SessionLimits extends GateLimits {
  authTimeoutMs: number;
  idleTimeoutMs: number;
  /**
   * A listener without AUTH (the inbound MX, inbound/listener.ts): no AUTH deadline, the idle
   * timeout from connect, and instead a deadline for the whole session (sessionTimeout), so a
   * client trickling bytes cannot hold a connection for ever.
   */
  withoutAuth?: { sessionDeadlineMs: number };
}

interface Live {
  session: WireSession;
  ticket: GateTicket;
  authDeadline: NodeJS.Timeout | null;
}

export class Sessions implements WireHooks<GateTicket> {
  private readonly gate: ConnectionGate;
  private readonly live = new Map<string, Live>();
  private draining = false;
  private onEmpty: (() => void) | null = null;

  constructor(private readonly limits: SessionLimits) {
    this.gate = new ConnectionGate(limits);
  }

  get counts() {
    return this.gate.counts;
  }

  // ---- hooks of the wire server ----

  admit(address: string): { admitted: GateTicket } | { refused: SmtpReplyError } {
    if (this.draining) return { refused: smtpReply('shuttingDown') };
    const admission = this.gate.open(address);
    if (typeof admission === 'string') return { refused: smtpReply(admission) };
    if (admission.evicted) {
      const victim = [...this.live.values()].find((l) => l.ticket === admission.evicted);
      victim?.session.reply(smtpReply('listenerFull'));
    }
    return { admitted: admission.ticket };
  }

  started(session: WireSession, ticket: GateTicket): void {
    this.live.set(session.id, { session, ticket, authDeadline: this.armAuthDeadline(session) });
  }

  refuseCommand(_session: WireSession, verb: string): SmtpReplyError | null {
    // QUIT still gets its 221: the client is leaving anyway.
    return this.draining && verb !== 'QUIT' ? smtpReply('shuttingDown') : null;
  }

  idleTimeoutMs(session: WireSession): number {
    if (this.limits.withoutAuth || this.live.get(session.id)?.ticket.authenticated) return this.limits.idleTimeoutMs;
    return this.limits.authTimeoutMs;
  }

  // ---- events the listener reports ----

  authenticated(id: string): void {
    const l = this.live.get(id);
    if (!l) return;
    this.gate.authenticated(l.ticket);
    if (l.authDeadline) clearTimeout(l.authDeadline);
    l.authDeadline = null;
    l.session.setIdleTimeout(this.limits.idleTimeoutMs);
  }

  /** After STARTTLS the session starts over unauthenticated (RFC 3207 4.2), with a new deadline. */
  secured(id: string): void {
    const l = this.live.get(id);
    if (!l || !l.ticket.authenticated) return;
    this.gate.unauthenticatedAgain(l.ticket);
    l.authDeadline = this.armAuthDeadline(l.session);
  }

  /** A DATA reply was sent: while draining, the session ends here. */
  afterTransaction(id: string): void {
    if (!this.draining) return;
    const l = this.live.get(id);
    if (l) setImmediate(() => l.session.reply(smtpReply('shuttingDown')));
  }

  /**
   * The server ended an authenticated session (QUIT answered, a 421): its place among its
   * address's connections is free now, as Postfix's smtpd tells anvil at the end of the session,
   * not when the client's FIN comes. A client that connects per message from a pool of workers
   * opens its next connection as soon as it has the 221, often before the server has seen the
   * last one close: counted until then, a pool as large as the per-address cap got 421s. An
   * unauthenticated session keeps its place until its socket is gone (at most the library's 5 s
   * half-close deadline), so anonymous connect-and-QUIT loops cannot pile up sockets.
   */
  closing(session: WireSession): void {
    const l = this.live.get(session.id);
    if (l?.ticket.authenticated) this.gate.close(l.ticket);
  }

  closed(id: string): void {
    const l = this.live.get(id);
    if (!l) return;
    if (l.authDeadline) clearTimeout(l.authDeadline);
    this.gate.close(l.ticket);
    this.live.delete(id);
    if (this.live.size === 0) this.onEmpty?.();
  }

  /**
   * Shutdown: refuses new connections and commands, closes idle sessions now, waits up to
   * graceMs for the busy ones to finish their transaction, then cuts what is left.
   */
  async drain(graceMs: number): Promise<void> {
    this.draining = true;
    for (const { session } of this.live.values()) if (!session.busy) session.reply(smtpReply('shuttingDown'));
    if (this.live.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => (this.onEmpty = resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
      ]);
      clearTimeout(timer);
      this.onEmpty = null;
    }
    for (const { session } of this.live.values()) {
      session.reply(smtpReply('shuttingDown'));
      session.destroy();
    }
  }

  private armAuthDeadline(session: WireSession): NodeJS.Timeout {
    const deadline = this.limits.withoutAuth;
    const timer = deadline
      ? setTimeout(() => session.reply(smtpReply('sessionTimeout')), deadline.sessionDeadlineMs)
      : setTimeout(() => session.reply(smtpReply('authTimeout')), this.limits.authTimeoutMs);
    timer.unref();
    return timer;
  }
}
