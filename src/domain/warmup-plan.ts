/**
 * A sending source's warm-up plan (issue 35, delivery.sources[].warmup): from its start day (UTC)
 * it may carry at most its curve's messages a day to each provider's sites, and a share of that
 * an hour, until its curves end. Pure: the gate that holds the caps in the cluster is
 * delivery/warmup-gate.ts.
 *
 * A curve applies per site key: a provider id of the provider table (site-limits.ts; every Gmail
 * and Google Workspace MX counts as one "google"), or, for a site outside the table, the site
 * itself under the "other" curve. A key's curve is the plan's `sites` entry for it, else the
 * plan's `curve`, else the built-in one (warmup-curves.ts).
 */
import { PROVIDER_LIMITS } from './site-limits.js';
import { DEFAULT_WARMUP_CURVES, OTHER_SITES } from './warmup-curves.js';

export interface WarmupSetting {
  /** Day 1 of the plan, "YYYY-MM-DD" (a UTC day). */
  start: string;
  /** Messages a day per site for day 1..N (after day N no cap); default the built-in curves. */
  curve?: readonly number[];
  /** The curve of one provider id (site-limits.ts) or of "other" (sites not in the table). */
  sites?: Readonly<Record<string, readonly number[]>>;
}

export interface WarmupPlan {
  /** Day 1's midnight, UTC, epoch ms. */
  startMs: number;
  /** The curve of a provider id, or of OTHER_SITES. */
  curveOf(key: string): readonly number[];
  /** The last capped day of any curve: from day days + 1 on, the source is warm. */
  days: number;
}

export interface WarmupCaps {
  /** Day of the plan, 1-based. */
  day: number;
  perDay: number;
  perHour: number;
}

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
/**
 * A day's cap is reached in this many hours at the earliest: the hourly cap is the day's /
 * SPREAD_HOURS. SendGrid's automated warm-up caps each hour for the same reason: a day's cap
 * sent in its first minutes is the burst from a new IP that providers defer, and a broadcast
 * queued at 08:00 would take the whole day's budget before the day's transactional mail.
 * Not the day's / 24: mail comes in business hours, and most of a strict day-long spread would
 * go unused.
 */
export const SPREAD_HOURS = 6;
/**
 * The hourly cap is never below this (nor above the day's): a few messages an hour are nothing to
 * a provider, while a first day's 20 at 4 an hour would hold the operator's first test and
 * transactional mail for hours.
 */
export const HOURLY_FLOOR = 5;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const SITE_KEYS = new Set([...PROVIDER_LIMITS.map((p) => p.id), OTHER_SITES]);

/** Everything wrong with one source's plan, each as a line for the config error. */
export function warmupProblems(source: string, w: WarmupSetting): string[] {
  const at = `"delivery.sources" source "${source}": warmup`;
  const problems: string[] = [];
  if (dayStart(w.start) === undefined) problems.push(`${at}.start "${w.start}" is not a date (YYYY-MM-DD)`);
  if (w.curve !== undefined) problems.push(...curveProblems(`${at}.curve`, w.curve));
  for (const [key, curve] of Object.entries(w.sites ?? {})) {
    if (!SITE_KEYS.has(key)) problems.push(`${at}.sites names "${key}", which is not a provider (${[...SITE_KEYS].join(', ')})`);
    problems.push(...curveProblems(`${at}.sites.${key}`, curve));
  }
  return problems;
}

/** The checked setting as the gate uses it. */
export function resolveWarmupPlan(w: WarmupSetting): WarmupPlan {
  const curveOf = (key: string): readonly number[] => w.sites?.[key] ?? w.curve ?? DEFAULT_WARMUP_CURVES[key] ?? DEFAULT_WARMUP_CURVES[OTHER_SITES]!;
  const days = Math.max(0, ...[...SITE_KEYS].map((k) => curveOf(k).length));
  return { startMs: dayStart(w.start)!, curveOf, days };
}

/** The plan's day at `now`, 1-based (0 or less: before its start). */
export function dayOfPlan(plan: WarmupPlan, now: number): number {
  return Math.floor((now - plan.startMs) / DAY_MS) + 1;
}

/** The caps of a site key at `now`; undefined when its curve has ended (no cap). Before the start: day 1's. */
export function capsAt(plan: WarmupPlan, key: string, now: number): WarmupCaps | undefined {
  const day = Math.max(1, dayOfPlan(plan, now));
  const curve = plan.curveOf(key);
  if (day > curve.length) return undefined;
  const perDay = curve[day - 1]!;
  return { day, perDay, perHour: hourlyCap(perDay) };
}

/** The hourly cap of a day's cap: the day spread over SPREAD_HOURS at least, HOURLY_FLOOR at least, the day's at most. */
export function hourlyCap(perDay: number): number {
  return Math.min(perDay, Math.max(HOURLY_FLOOR, Math.ceil(perDay / SPREAD_HOURS)));
}

/** The end of the UTC day and of the hour that hold `now` (epoch ms). */
export function windowEnds(now: number): { day: number; hour: number } {
  return { day: (Math.floor(now / DAY_MS) + 1) * DAY_MS, hour: (Math.floor(now / HOUR_MS) + 1) * HOUR_MS };
}

function curveProblems(at: string, curve: readonly number[]): string[] {
  if (curve.length === 0) return [`${at} is empty (leave it out for the built-in curve)`];
  const problems: string[] = [];
  curve.forEach((n, i) => {
    if (!Number.isInteger(n) || n < 1) problems.push(`${at}[${i}] is ${n}: messages a day are a positive integer`);
    else if (i > 0 && n < curve[i - 1]!) problems.push(`${at}[${i}] is ${n}, less than the day before (${curve[i - 1]}): a curve never decreases`);
  });
  return problems;
}

/** Midnight UTC of "YYYY-MM-DD", or undefined when it is no date (2026-02-30 included). */
function dayStart(text: string): number | undefined {
  const m = DATE.exec(text);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return new Date(ms).toISOString().slice(0, 10) === text ? ms : undefined;
}
