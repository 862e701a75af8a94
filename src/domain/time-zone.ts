/**
 * Calendar days of an IANA time zone as UTC instants, for the daily statistics series. Built on
 * Intl (the ICU time zone data Node ships), so daylight-saving days come out 23 or 25 hours long
 * and half-hour zones start their days at :30 or :45 UTC.
 */

/**
 * The formatter that reads wall-clock parts in a zone. Building one costs far more than using
 * it (tens of µs against a few), so a request builds one ZoneCalendar and asks it everything,
 * rather than a module-level cache (no state outlives a request). Throws a RangeError for a zone
 * Intl does not know.
 */
function formatter(zone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
}

/** The calendar days of one zone, with its formatter built once. */
export class ZoneCalendar {
  private constructor(private readonly fmt: Intl.DateTimeFormat) {}

  /** Null for a zone Intl does not know (IANA names and links such as "UTC", "US/Eastern" are known). */
  static of(zone: string): ZoneCalendar | null {
    try {
      return new ZoneCalendar(formatter(zone));
    } catch {
      return null;
    }
  }

  /**
   * The edges of the zone's calendar days from the day holding fromMs to the day holding toMs:
   * n + 1 instants for n days, day i being [edges[i], edges[i + 1]).
   */
  dayEdges(fromMs: number, toMs: number): number[] {
    const fmt = this.fmt;
    const first = localTime(fmt, fromMs);
    const last = localTime(fmt, toMs);
    const lastWall = Date.UTC(last.y, last.m - 1, last.d);
    const offsets = new MidnightOffsets(fmt);
    const edges: number[] = [];
    for (let i = 0; ; i++) {
      const date = new Date(Date.UTC(first.y, first.m - 1, first.d + i));
      const wall = date.getTime();
      edges.push(dayStartMs(fmt, offsets, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()));
      if (wall > lastWall) return edges;
    }
  }

  /** The first instant of the calendar day `days` days before the day holding ms. */
  dayStartBefore(ms: number, days: number): number {
    const t = localTime(this.fmt, ms);
    const date = new Date(Date.UTC(t.y, t.m - 1, t.d - days));
    return dayStartMs(this.fmt, new MidnightOffsets(this.fmt), date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate());
  }

  /** Number of calendar days dayEdges would return, without computing the edges. */
  dayCount(fromMs: number, toMs: number): number {
    const a = localTime(this.fmt, fromMs);
    const b = localTime(this.fmt, toMs);
    return Math.round((Date.UTC(b.y, b.m - 1, b.d) - Date.UTC(a.y, a.m - 1, a.d)) / 86_400_000) + 1;
  }
}

interface LocalTime {
  y: number;
  m: number;
  d: number;
  /** Milliseconds of the local wall clock read as if it were UTC. */
  wallMs: number;
}

function localTime(fmt: Intl.DateTimeFormat, ms: number): LocalTime {
  const p: Record<string, number> = {};
  for (const part of fmt.formatToParts(new Date(ms))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wallMs = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return { y: p.year, m: p.month, d: p.day, wallMs };
}

/** The zone's offset from UTC at an instant, in milliseconds (whole seconds). */
function offsetMs(fmt: Intl.DateTimeFormat, ms: number): number {
  return localTime(fmt, ms).wallMs - Math.floor(ms / 1000) * 1000;
}

/**
 * The zone's offset at UTC midnights, memoized for one series. Intl calls cost ~25 µs, so a year
 * would spend ~20 ms on them: offsets are read every 7th day, and the days between two equal
 * samples take that value (no zone changes its offset twice within a week, then back).
 */
class MidnightOffsets {
  private readonly memo = new Map<number, number>();

  constructor(private readonly fmt: Intl.DateTimeFormat) {}

  private exact(day: number): number {
    let v = this.memo.get(day);
    if (v === undefined) this.memo.set(day, (v = offsetMs(this.fmt, day * 86_400_000)));
    return v;
  }

  at(day: number): number {
    const lo = day - (((day % 7) + 7) % 7);
    const a = this.exact(lo);
    return a === this.exact(lo + 7) ? a : this.exact(day);
  }
}

/**
 * The first instant of local day y-m-d. Local midnight read with the offsets in force a day
 * before and a day after; the earliest candidate that falls on that day wins. That is midnight
 * itself, the first midnight when it occurs twice, and the end of the gap when a clock change
 * skips midnight (the day then starts at 01:00).
 */
function dayStartMs(fmt: Intl.DateTimeFormat, offsets: MidnightOffsets, y: number, m: number, d: number): number {
  const wall = Date.UTC(y, m - 1, d);
  const day = wall / 86_400_000;
  // Most days: the same offset a day before and after, so no clock change near midnight.
  const before = offsets.at(day - 1);
  if (before === offsets.at(day + 1)) return wall - before;
  const candidates = [wall - offsetMs(fmt, wall - 86_400_000), wall - offsetMs(fmt, wall), wall - offsetMs(fmt, wall + 86_400_000)];
  let best = Infinity;
  for (const c of candidates) {
    const t = localTime(fmt, c);
    if (t.y === y && t.m === m && t.d === d && c < best) best = c;
  }
  return Number.isFinite(best) ? best : wall - offsetMs(fmt, wall);
}
