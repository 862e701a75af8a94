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
 * slot may go to another node meanwhile; then the next ask answers a new wait).
 *
 * At high rates (STASH_MS worth of slots is 2 or more: 400/s and up), one ask takes up to that
 * many slots at once, as that many asks at the same moment would (within the GCRA's burst), and
 * take() hands them out for STASH_MS; what is left then is dropped, never kept for later (a node
 * that stops sending holds nothing the others could use, and a pause of the event loop does not
 * bunch messages). A slot so used is sent up to STASH_MS after the moment it was taken: the shape
 * of the schedule leaves that much room (stashShape: the burst is smaller by STASH_MS's worth),
 * so any rate + 1 consecutive slots, each sent up to STASH_MS late, still span more than 1000 ms.
 * Below 400/s nothing changes: one ask per slot, the Pacer's own shape.
 *
 * Cost: one round trip of the bridge per ask (about 0.3 ms to a local server, during which the
 * node's event loop waits): at delivery.rate 50, about 100 calls and 30 ms a second, 3% of one
 * core, on the busiest node; with the cap lifted, one ask per STASH_MS instead of one per message
 * (bench cluster: the pacer's blocking round trip was the largest cost of a delivery).
 */
import { Pacer, PACER_MARGIN_MS } from '../../queue/rate-limiter.js';
import type { PacerOptions, SharedPacer } from '../port.js';
import type { SyncBridge } from './bridge.js';
import type { CoordinationTime } from './time.js';

export const PACER_FUNCTION = `
-- The one-slot form of an earlier build (five arguments, a float8 answer).
DROP FUNCTION IF EXISTS coord_pacer_take(text, float8, float8, int4, float8);
CREATE OR REPLACE FUNCTION coord_pacer_take(p_name text, p_now float8, p_interval float8, p_burst int4, p_tolerance float8, p_want int4 DEFAULT 1)
RETURNS TABLE (granted int4, wait_ms float8) LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  r coord_pacers%ROWTYPE;
  t float8;
  v_tat float8;
  wait float8;
  n int4 := 0;
BEGIN
  INSERT INTO coord_pacers (name, tat, at_ms) VALUES (p_name, '-Infinity', coord_now(p_now)) ON CONFLICT (name) DO NOTHING;
  SELECT * INTO r FROM coord_pacers c WHERE c.name = p_name FOR UPDATE;
  t := greatest(r.at_ms, coord_now(p_now));
  v_tat := r.tat;
  -- Up to p_want slots at t, each as Pacer.take() would take it; below a microsecond is the
  -- float error of summed intervals, not a wait.
  LOOP
    wait := v_tat - (p_burst - 1) * p_interval - p_tolerance - t;
    EXIT WHEN wait >= 1e-3 OR n >= p_want;
    v_tat := greatest(v_tat, t) + p_interval;
    n := n + 1;
  END LOOP;
  UPDATE coord_pacers c SET tat = v_tat, at_ms = t WHERE c.name = p_name;
  RETURN QUERY SELECT n, CASE WHEN n > 0 THEN 0::float8 ELSE wait END;
END $fn$;
`;

const TAKE = 'SELECT granted, wait_ms FROM coord_pacer_take($1, $2::float8, $3::float8, $4::int4, $5::float8, $6::int4)';

/** How long take() answers "wait" after the row could not be asked (the database is slow or gone). */
const NO_ANSWER_WAIT_MS = 50;
/** How long slots taken together are handed out before the rest is dropped (see the header). */
export const STASH_MS = 5;

interface Shape {
  intervalMs: number;
  burst: number;
  toleranceMs: number;
}

/**
 * The schedule for slots sent up to STASH_MS after they are taken: the Pacer's interval, a burst
 * smaller by STASH_MS's worth and the tolerance from what is left, so that rate + 1 consecutive
 * slots span at least 1000 + STASH_MS + tolerance ms (rate-limiter.ts's Pacer, with STASH_MS
 * taken out of the margin for the burst).
 */
export function stashShape(rate: number, marginMs: number, pacer: Shape): Shape {
  const burst = 1 + Math.floor((rate * Math.max(0, marginMs - STASH_MS)) / (1000 + marginMs));
  const toleranceMs = Math.max(0, Math.min(pacer.toleranceMs, (marginMs - STASH_MS - (burst - 1) * pacer.intervalMs) / 2));
  return { intervalMs: pacer.intervalMs, burst, toleranceMs };
}

export class PgSharedPacer implements SharedPacer {
  readonly effectiveRate: number;
  private readonly shape: Shape;
  /** Slots asked for at once (1 below 400/s). */
  private readonly want: number;
  /** Local time before which the row's last answer said no slot is free. */
  private freeAt = -Infinity;
  /** Slots taken together and not handed out yet, and until when they may be. */
  private stash = 0;
  private stashUntil = -Infinity;

  constructor(
    private readonly name: string,
    o: PacerOptions,
    private readonly bridge: SyncBridge,
    private readonly time: CoordinationTime,
  ) {
    // The Pacer's own spacing (interval, burst, tolerance): one definition of the schedule.
    const pacer = new Pacer({ rate: o.perSecond, marginMs: o.marginMs, now: () => 0 });
    this.effectiveRate = pacer.effectiveRate;
    this.want = Math.max(1, Math.floor((pacer.effectiveRate * STASH_MS) / 1000));
    this.shape = this.want > 1 ? stashShape(o.perSecond, o.marginMs ?? PACER_MARGIN_MS, pacer) : pacer;
  }

  take(): number {
    const now = this.time.local();
    if (this.stash > 0 && now <= this.stashUntil) {
      this.stash--;
      return 0;
    }
    this.stash = 0;
    if (now < this.freeAt) return this.freeAt - now;
    const { intervalMs, burst, toleranceMs } = this.shape;
    const rows = this.bridge.call<{ granted: number; wait_ms: number }>(TAKE, [this.name, this.time.query(), intervalMs, burst, toleranceMs, this.want]);
    const granted = rows?.[0]?.granted ?? 0;
    if (granted > 0) {
      this.stash = granted - 1;
      this.stashUntil = now + STASH_MS;
      return 0;
    }
    const wait = rows?.[0]?.wait_ms ?? NO_ANSWER_WAIT_MS;
    this.freeAt = now + wait;
    return wait;
  }
}
