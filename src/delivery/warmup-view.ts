/**
 * What GET /ops/sources shows of a warming source under "warmup" (WarmupGate.view): its plan's
 * start, the day of the plan it is on of how many, whether it is complete, and per site key the
 * messages it carried today and this hour against their caps (null: that key's curve has ended,
 * no cap). Every provider of the table is listed, so the day's caps show before any mail went;
 * sites outside the table are listed once they carried mail today, the busiest first.
 */
import type { Counters } from '../coordination/port.js';
import { PROVIDER_LIMITS } from '../domain/site-limits.js';
import { OTHER_SITES } from '../domain/warmup-curves.js';
import { capsAt, dayOfPlan, type WarmupPlan } from '../domain/warmup-plan.js';
import { keyOfWindow } from './warmup-keys.js';

/** Sites outside the provider table listed at most. */
const OTHER_SITES_SHOWN = 20;

export interface WarmupCount {
  sent: number;
  /** null: no cap (the key's curve has ended). */
  cap: number | null;
}

export interface WarmupSiteView {
  /** A provider id, or a site outside the provider table. */
  key: string;
  /** The curve it follows: the provider id, or "other". */
  curve: string;
  today: WarmupCount;
  thisHour: WarmupCount;
}

export interface WarmupView {
  /** Day 1 of the plan (UTC). */
  start: string;
  /** The day of the plan now, 1-based; 0 before its start (day 1's caps hold until then). */
  day: number;
  /** The last capped day of its longest curve. */
  days: number;
  /** Past its last capped day: no cap any more. */
  complete: boolean;
  sites: WarmupSiteView[];
}

export async function warmupView(o: { plan: WarmupPlan; start: string; counters: Counters; now: number }): Promise<WarmupView> {
  const { plan, now } = o;
  const counts = await o.counters.read();
  const today = new Map<string, number>();
  const hour = new Map<string, number>();
  for (const [k, n] of counts) {
    const d = keyOfWindow(k, now, 'day');
    if (d !== undefined) today.set(d, n);
    const h = keyOfWindow(k, now, 'hour');
    if (h !== undefined) hour.set(h, n);
  }
  const providers = new Set(PROVIDER_LIMITS.map((p) => p.id));
  const others = [...today].filter(([k]) => !providers.has(k)).sort((a, b) => b[1] - a[1]).slice(0, OTHER_SITES_SHOWN);
  const entries = [...PROVIDER_LIMITS.map((p) => ({ key: p.id, curve: p.id })), ...others.map(([key]) => ({ key, curve: OTHER_SITES }))];
  const sites = entries.map(({ key, curve }) => {
    const caps = capsAt(plan, curve, now);
    return { key, curve, today: { sent: today.get(key) ?? 0, cap: caps?.perDay ?? null }, thisHour: { sent: hour.get(key) ?? 0, cap: caps?.perHour ?? null } };
  });
  const day = Math.max(0, dayOfPlan(plan, now));
  return { start: o.start, day, days: plan.days, complete: day > plan.days, sites };
}
