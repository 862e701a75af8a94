/**
 * The shared pacer (port.ts, SharedPacer): queue/rate-limiter.ts's Pacer, GCRA, with its
 * theoretical arrival time in one row (coord_pacers) instead of a field. take() is the Pacer's
 * take() run by coord_pacer_take under the row's lock: a slot is taken only when it is free at
 * the row's time, so the slots of every node together are spaced as one Pacer spaces them, and
 * no 1-second window at the receivers holds more than `rate` of them.
 *
 * take() stays synchronous (the dispatcher calls it before each message's body) through the
 * bridge (bridge.ts): one blocking round trip per call that may find a slot. A wait answered by
 * the row is kept: until it has passed, take() answers what is left of it without asking (the
 * slot may go to another node meanwhile; then the next ask answers a new wait). Nothing is
 * reserved ahead: a slot is taken at the moment of sending, as the Pacer takes it, so a node
 * that stops sending holds no slot the others could use.
 *
 * Cost: one round trip of the bridge per message sent and per wait that ran out (about 0.3 ms
 * to a local server, during which the node's event loop waits): at delivery.rate 50, about
 * 100 calls and 30 ms a second, 3% of one core, on the busiest node.
 */
import { Pacer } from '../../queue/rate-limiter.js';
import type { PacerOptions, SharedPacer } from '../port.js';
import type { SyncBridge } from './bridge.js';
import type { CoordinationTime } from './time.js';

export const PACER_FUNCTION = `
CREATE OR REPLACE FUNCTION coord_pacer_take(p_name text, p_now float8, p_interval float8, p_burst int4, p_tolerance float8)
RETURNS float8 LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  r coord_pacers%ROWTYPE;
  t float8;
  wait float8;
BEGIN
  INSERT INTO coord_pacers (name, tat, at_ms) VALUES (p_name, '-Infinity', coord_now(p_now)) ON CONFLICT (name) DO NOTHING;
  SELECT * INTO r FROM coord_pacers c WHERE c.name = p_name FOR UPDATE;
  t := greatest(r.at_ms, coord_now(p_now));
  wait := r.tat - (p_burst - 1) * p_interval - p_tolerance - t;
  -- Below a microsecond is the float error of summed intervals, not a wait (Pacer.take).
  IF wait >= 1e-3 THEN
    UPDATE coord_pacers c SET at_ms = t WHERE c.name = p_name;
    RETURN wait;
  END IF;
  UPDATE coord_pacers c SET tat = greatest(r.tat, t) + p_interval, at_ms = t WHERE c.name = p_name;
  RETURN 0;
END $fn$;
`;

const TAKE = 'SELECT coord_pacer_take($1, $2::float8, $3::float8, $4::int4, $5::float8) AS wait_ms';

/** How long take() answers "wait" after the row could not be asked (the database is slow or gone). */
const NO_ANSWER_WAIT_MS = 50;

export class PgSharedPacer implements SharedPacer {
  readonly effectiveRate: number;
  private readonly shape: Pacer;
  /** Local time before which the row's last answer said no slot is free. */
  private freeAt = -Infinity;

  constructor(
    private readonly name: string,
    o: PacerOptions,
    private readonly bridge: SyncBridge,
    private readonly time: CoordinationTime,
  ) {
    // The Pacer's own spacing (interval, burst, tolerance): one definition of the schedule.
    this.shape = new Pacer({ rate: o.perSecond, marginMs: o.marginMs, now: () => 0 });
    this.effectiveRate = this.shape.effectiveRate;
  }

  take(): number {
    const now = this.time.local();
    if (now < this.freeAt) return this.freeAt - now;
    const { intervalMs, burst, toleranceMs } = this.shape;
    const rows = this.bridge.call<{ wait_ms: number }>(TAKE, [this.name, this.time.query(), intervalMs, burst, toleranceMs]);
    const wait = rows?.[0]?.wait_ms ?? NO_ANSWER_WAIT_MS;
    if (wait > 0) this.freeAt = now + wait;
    return wait;
  }
}
