/**
 * The shared attempt budget's row and its three functions (rates.ts spends what they grant).
 *
 * A budget is queue/rate-limiter.ts's RateLimiter kept in rows: the token bucket (coord_rates:
 * tokens at at_ms, refilled at `rate` per second up to `burst`) and the 1-second sliding window
 * of starts (coord_rate_window: starts per time). Each function first locks the budget's
 * coord_rates row (SELECT ... FOR UPDATE), so every change to one budget, from any node, runs
 * one after the other: two nodes can never both take its last token or its last place in the
 * window. Each is one statement from the client (one round trip), and reads the time once
 * (coord_now: the database's clock, or the test's), never before the row's last time (a clock
 * stepped back counts as no time passing, as RateLimiter's forwardOnly).
 *
 * A node reserves a block ahead (coord_rate_reserve with a hold): the block's starts enter the
 * window at the latest time they may happen (the reservation's time + the hold), so the window
 * holds them for as long as they may still come; when the node starts some, coord_rate_spent
 * moves them to the time they happened, and when the hold ends, coord_rate_return gives the rest
 * back to the bucket and takes them out of the window. A reservation spent at once (tryTake) has
 * no hold: its starts enter the window at the reservation's time.
 *
 * The burst is kept at the times the starts happen, not only at the reservations': while a
 * block is held, its unspent starts (coord_rate_window.held) count as still in the bucket, which
 * refills only up to the burst less them. Otherwise a block reserved from an empty bucket and
 * spent a moment later would add to what the bucket had refilled meanwhile for the others
 * (burst + rate x hold at once). A held block counts until its hold's end; a node that died
 * with one loses its starts then, and the bucket refills past them.
 */

export const RATE_FUNCTIONS = `
-- Locks the budget's row (made full at its first use) and brings its bucket to now: refilled
-- at p_rate for the time since its last change, up to the burst less the starts held in
-- blocks at that change (a held start counts as still in the bucket; a block whose hold ended
-- since is still counted here, which may only refill less). Drops the window's starts older
-- than a second. Answers now on the row's clock: never before its last change.
CREATE OR REPLACE FUNCTION coord_rate_refill(p_name text, p_now float8, p_rate float8, p_burst int4)
RETURNS float8 LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  r coord_rates%ROWTYPE;
  t float8;
  v_held int4;
BEGIN
  INSERT INTO coord_rates (name, tokens, at_ms) VALUES (p_name, p_burst, coord_now(p_now)) ON CONFLICT (name) DO NOTHING;
  SELECT * INTO r FROM coord_rates c WHERE c.name = p_name FOR UPDATE;
  t := greatest(r.at_ms, coord_now(p_now));
  SELECT coalesce(sum(w.held), 0) INTO v_held FROM coord_rate_window w WHERE w.name = p_name AND w.at_ms > r.at_ms;
  UPDATE coord_rates c SET tokens = least(p_burst - v_held, r.tokens + (t - r.at_ms) * p_rate / 1000), at_ms = t WHERE c.name = p_name;
  -- Only starts strictly after t - 1000 are in the window (RateLimiter.prune).
  DELETE FROM coord_rate_window w WHERE w.name = p_name AND w.at_ms <= t - 1000;
  RETURN t;
END $fn$;

CREATE OR REPLACE FUNCTION coord_rate_reserve(p_name text, p_now float8, p_rate float8, p_burst int4, p_want int4, p_hold float8, p_force boolean)
RETURNS TABLE (granted int4, block_at float8, wait_ms float8)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  t float8 := coord_rate_refill(p_name, p_now, p_rate, p_burst);
  v_tokens float8;
  cap int4 := floor(p_rate);
  in_window int4;
  g int4;
  oldest float8;
BEGIN
  SELECT c.tokens INTO v_tokens FROM coord_rates c WHERE c.name = p_name;
  SELECT coalesce(sum(w.n), 0) INTO in_window FROM coord_rate_window w WHERE w.name = p_name;
  IF p_force THEN
    g := p_want; -- take() past what was reserved: recorded as RateLimiter.take records it (tokens below zero)
  ELSE
    g := greatest(0, least(p_want, floor(v_tokens)::int4, cap - in_window));
  END IF;
  block_at := t + p_hold;
  IF g > 0 THEN
    v_tokens := v_tokens - g;
    in_window := in_window + g;
    INSERT INTO coord_rate_window AS w (name, at_ms, n, held) VALUES (p_name, block_at, g, CASE WHEN p_hold > 0 THEN g ELSE 0 END)
      ON CONFLICT (name, at_ms) DO UPDATE SET n = w.n + excluded.n, held = w.held + excluded.held;
    UPDATE coord_rates c SET tokens = v_tokens WHERE c.name = p_name;
  END IF;
  granted := g;
  IF least(floor(v_tokens), cap - in_window) >= 1 THEN
    wait_ms := 0;
  ELSE
    -- RateLimiter.msUntilAvailable: a token's refill, and the window's freeing up when the
    -- start that makes it full leaves it.
    IF in_window >= cap THEN
      SELECT s.at_ms INTO oldest FROM (
        SELECT w.at_ms, sum(w.n) OVER (ORDER BY w.at_ms DESC) AS newer FROM coord_rate_window w WHERE w.name = p_name
      ) s WHERE s.newer >= cap ORDER BY s.at_ms DESC LIMIT 1;
    END IF;
    wait_ms := greatest(1,
      CASE WHEN v_tokens >= 1 THEN 0 ELSE ceil((1 - v_tokens) * 1000 / p_rate) END,
      coalesce(oldest + 1000 - t, 0));
  END IF;
  RETURN NEXT;
END $fn$;

CREATE OR REPLACE FUNCTION coord_rate_spent(p_name text, p_rate float8, p_burst int4, p_block float8, p_n int4, p_at float8)
RETURNS void LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
BEGIN
  -- The bucket is brought to the time the starts happened (held until then, not after), unless
  -- the row has moved past it already: a late report only refills less.
  PERFORM coord_rate_refill(p_name, p_at, p_rate, p_burst);
  UPDATE coord_rate_window w SET n = w.n - p_n, held = greatest(0, w.held - p_n) WHERE w.name = p_name AND w.at_ms = p_block;
  DELETE FROM coord_rate_window w WHERE w.name = p_name AND w.at_ms = p_block AND w.n <= 0;
  INSERT INTO coord_rate_window AS w (name, at_ms, n) VALUES (p_name, least(p_at, p_block), p_n)
    ON CONFLICT (name, at_ms) DO UPDATE SET n = w.n + excluded.n;
END $fn$;

CREATE OR REPLACE FUNCTION coord_rate_return(p_name text, p_now float8, p_rate float8, p_burst int4, p_block float8, p_n int4)
RETURNS void LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  t float8 := coord_rate_refill(p_name, p_now, p_rate, p_burst);
  v_held int4;
BEGIN
  UPDATE coord_rate_window w SET n = w.n - p_n, held = greatest(0, w.held - p_n) WHERE w.name = p_name AND w.at_ms = p_block;
  DELETE FROM coord_rate_window w WHERE w.name = p_name AND w.at_ms = p_block AND w.n <= 0;
  SELECT coalesce(sum(w.held), 0) INTO v_held FROM coord_rate_window w WHERE w.name = p_name AND w.at_ms > t;
  -- From held back to the bucket: the bucket and its held starts together stay what they were,
  -- and never above the burst (a return after the hold's end, when the bucket refilled past it).
  UPDATE coord_rates c SET tokens = least(p_burst - v_held, c.tokens + p_n) WHERE c.name = p_name;
END $fn$;
`;

/** Reserves up to `want` starts (hold 0: spent now); answers what was granted and the wait for one more. */
export const RESERVE = 'SELECT granted, block_at, wait_ms FROM coord_rate_reserve($1, $2::float8, $3::float8, $4::int4, $5::int4, $6::float8, $7::boolean)';
/** $5 starts of the block at $4 happened at $6. */
export const SPENT = 'SELECT coord_rate_spent($1, $2::float8, $3::int4, $4::float8, $5::int4, $6::float8)';
/** $6 starts of the block at $5 will not happen (now: $2): back to the bucket. */
export const RETURN = 'SELECT coord_rate_return($1, $2::float8, $3::float8, $4::int4, $5::float8, $6::int4)';

export interface ReserveRow {
  granted: number;
  block_at: number;
  wait_ms: number;
}
