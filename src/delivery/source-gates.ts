/**
 * What may take a sending source out of its pool for a while (issue 35): its warm-up caps, an
 * automatic shaping rule's suspension, a failing address. Each is a SourceGate; SourcePicker
 * asks every gate before it lets SourceChooser pick a source for an attempt, and tells every
 * gate the outcome of each attempt a configured source carried.
 *
 * A gate answers per (source, site): the site is the MX site's key (sites.ts; the recipient
 * domain itself until its MX lookup named the site), so a Yahoo suspension of one source does
 * not stop its mail to Gmail, nor the other sources' mail to Yahoo.
 *
 * The three calls:
 *  - check(): synchronous, from this node's view (a cluster gate keeps that view fresh from
 *    the coordination on its own, in the background): may this source carry mail to this site
 *    now? The chooser skips a source that may not; its turns go to the others by their weights.
 *  - reserve(): asked once the chooser picked a source and before the attempt connects, for
 *    what must be decided atomically for the whole cluster (a warm-up cap's last message): true
 *    takes one unit, false sends the picker back to the chooser without this source.
 *  - observe(): every finished attempt from a configured source, with its result (the reply
 *    texts shaping reads, the connect errors a failing address gives).
 *  - limits(): a lower ceiling for the source at the site for now (a shaping rule's "one
 *    connection, 2 messages a second"); the picker holds the source's sessions at the site and
 *    its pace there to the lowest ceiling any gate gives, below the site's own limits.
 *
 * With no delivery.sources configured no gate is asked: the kernel's choice has no warm-up,
 * shaping or failure of its own, and delivery is exactly what it was before sources existed.
 */
import type { AttemptResult } from '../domain/delivery-result.js';

/** Why a source may not carry mail to a site now, for the log, the deferral text and GET /ops/sources. */
export interface GateRefusal {
  /** The gate's name ('warmup', 'shaping', 'health', …). */
  gate: string;
  /** One line a person reads, e.g. "warm-up: 200 of 200 messages to google today". */
  reason: string;
  /** When it may carry mail again (epoch ms), when known. */
  until?: number;
}

/** A gate's ceiling for one source at one site, for now. */
export interface SourceSiteCeiling {
  /** Sessions in flight from the source to the site at most (at least 1; a suspension is check()'s). */
  concurrency?: number;
  /** Messages per second from the source at the site at most. */
  perSecond?: number;
  /**
   * What the ceiling counts over, when more than the site: a provider-wide ceiling
   * ("provider:microsoft") holds the source's sessions and pace at all of that provider's sites
   * together, not at each of its thousands of tenant MX sites alone. Default: the site.
   */
  scope?: string;
}

/** The attempt a gate is asked about or told of. */
export interface SourceAttempt {
  source: string;
  pool: string;
  /** The MX site's key (sites.ts), or the recipient domain while its site is unknown. */
  site: string;
  /** The recipient domain of the job. */
  domain: string;
}

export interface SourceGate {
  /** Names the gate in refusals and logs. */
  readonly name: string;
  /** Undefined when `source` may carry one more message to `site` at `now`, else why not. Synchronous: this node's view. */
  check(source: string, site: string, now: number): GateRefusal | undefined;
  /** Takes one unit of a shared budget for the attempt (atomic in a cluster); false: not this source now. */
  reserve?(attempt: SourceAttempt, now: number): Promise<boolean>;
  /** The result of an attempt the source carried (after it ended, before it is recorded). Must not throw. */
  observe?(attempt: SourceAttempt, result: AttemptResult, startedAt: number, now: number): void;
  /** A lower ceiling for the source at the site now, if the gate sets one. Synchronous: this node's view. */
  limits?(source: string, site: string, now: number): SourceSiteCeiling | undefined;
  /**
   * What GET /ops/sources (and the dashboard's Sources page) shows of this gate for a source,
   * under the gate's name (`warmup`, `shaping`, `health`); undefined shows nothing.
   */
  view?(source: string, now: number): Promise<object | undefined>;
  /** Background work (a cluster view's refresh), if the gate has any. */
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}
