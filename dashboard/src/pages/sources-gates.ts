/**
 * The gates' parts of a source in GET /ops/sources (`warmup`, `shaping`, `health`: each
 * SourceGate's view(), src/delivery/source-gates.ts), read for the Sources page. Each gate owns
 * its fields and may add more, so each part is read defensively: what is absent or not of the
 * expected kind gives undefined (the page shows nothing of it) and unknown fields are ignored,
 * never an error. This file imports nothing, so a unit test can load it outside the browser.
 */

type Json = Record<string, unknown>;

/** A time as a gate may give it: epoch ms or an ISO string; undefined otherwise. */
export type Instant = string | number;

export interface WarmupSite {
  /** The provider key or site ("google", "microsoft", "other", an MX site). */
  key: string;
  todaySent?: number;
  todayCap?: number;
  hourSent?: number;
  hourCap?: number;
}

export interface WarmupProgress {
  day?: number;
  days?: number;
  complete: boolean;
  start?: string;
  sites: WarmupSite[];
}

export interface ShapingEntry {
  site: string;
  rule?: string;
  action?: string;
  since?: Instant;
  until?: Instant;
}

export interface HealthState {
  /** "ok", "out", or whatever word the gate uses. */
  status: string;
  since?: Instant;
  until?: Instant;
  reason?: string;
  consecutiveFailures?: number;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function instant(v: unknown): Instant | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? v : undefined;
}

/** The first of `names` that is present in `o` as a number. */
function firstNum(o: Json, names: string[]): number | undefined {
  for (const n of names) if (num(o[n]) !== undefined) return num(o[n]);
  return undefined;
}

/** {sent, cap} of a window named `window` ("today"/"day", "hour"), nested or flat. */
function windowOf(o: Json, names: string[]): { sent?: number; cap?: number } {
  for (const n of names) {
    const w = o[n];
    if (isObject(w)) return { sent: firstNum(w, ['sent', 'used', 'count']), cap: firstNum(w, ['cap', 'limit', 'max']) };
  }
  const cap = (n: string) => [`${n}Cap`, `cap${n[0].toUpperCase()}${n.slice(1)}`];
  const sent = (n: string) => [`${n}Sent`, `sent${n[0].toUpperCase()}${n.slice(1)}`];
  return { sent: firstNum(o, names.flatMap(sent)), cap: firstNum(o, names.flatMap(cap)) };
}

function warmupSite(key: string | undefined, o: unknown): WarmupSite | undefined {
  if (!isObject(o)) return undefined;
  const name = key ?? str(o.provider) ?? str(o.site) ?? str(o.key) ?? str(o.name);
  if (name === undefined) return undefined;
  const today = windowOf(o, ['today', 'day', 'daily']);
  const hour = windowOf(o, ['hour', 'thisHour', 'hourly']);
  return { key: name, todaySent: today.sent, todayCap: today.cap, hourSent: hour.sent, hourCap: hour.cap };
}

function warmupSites(raw: unknown): WarmupSite[] {
  const list = Array.isArray(raw) ? raw.map((s) => warmupSite(undefined, s)) : isObject(raw) ? Object.entries(raw).map(([k, s]) => warmupSite(k, s)) : [];
  return list.filter((s): s is WarmupSite => s !== undefined);
}

/** A source's warm-up progress, or undefined when it has none (no plan: a warm source). */
export function warmupOf(raw: unknown): WarmupProgress | undefined {
  if (!isObject(raw)) return undefined;
  const day = firstNum(raw, ['day', 'currentDay']);
  const days = firstNum(raw, ['days', 'of', 'totalDays', 'planDays']);
  const sites = warmupSites(raw.sites ?? raw.providers ?? raw.perSite ?? raw.today);
  return { day, days, complete: raw.complete === true || raw.warm === true, start: str(raw.start) ?? str(raw.startDate), sites };
}

function shapingEntry(o: unknown, key?: string): ShapingEntry | undefined {
  if (!isObject(o)) return undefined;
  const site = str(o.site) ?? key;
  if (site === undefined) return undefined;
  const action = str(o.action) ?? (isObject(o.action) ? str(o.action.kind) ?? str(o.action.type) : undefined);
  return { site, rule: str(o.rule) ?? str(o.ruleId) ?? str(o.id), action, since: instant(o.since), until: instant(o.until) };
}

/** A source's active shaping entries: a list, or an object holding one (`active`, `entries`), or one per site. */
export function shapingOf(raw: unknown): ShapingEntry[] | undefined {
  let items: (ShapingEntry | undefined)[];
  if (Array.isArray(raw)) items = raw.map((e) => shapingEntry(e));
  else if (!isObject(raw)) return undefined;
  else {
    const list = raw.active ?? raw.entries ?? raw.shapings ?? raw.sites;
    if (Array.isArray(list)) items = list.map((e) => shapingEntry(e));
    else if (isObject(list)) items = Object.entries(list).map(([k, e]) => shapingEntry(e, k));
    else items = [];
  }
  return items.filter((e): e is ShapingEntry => e !== undefined);
}

/** A source's health: ok, or out (until when, why); undefined when the part is absent. */
export function healthOf(raw: unknown): HealthState | undefined {
  if (typeof raw === 'string') return { status: raw };
  if (!isObject(raw)) return undefined;
  const status = str(raw.status) ?? str(raw.state) ?? (typeof raw.available === 'boolean' ? (raw.available ? 'ok' : 'out') : undefined);
  if (status === undefined) return undefined;
  return {
    status,
    since: instant(raw.since),
    until: instant(raw.until),
    reason: str(raw.reason),
    consecutiveFailures: firstNum(raw, ['consecutiveFailures', 'failures']),
  };
}
