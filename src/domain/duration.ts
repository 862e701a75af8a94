/**
 * Durations in configuration are written the way operators write them in Postfix and Haraka
 * ("30s", "5m", "1h", "3d", or a bare number of milliseconds) and are held as milliseconds.
 */
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number {
  // Trimmed first (trim removes exactly what \s matches): /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/
  // shared the white space after a number between its two \s* in every way before failing on what
  // followed, quadratic in a run of it (issue 29). Here one \s* meets the unit or the end.
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new Error(`"${text}" is not a duration (examples: 500ms, 30s, 5m, 1h, 3d)`);
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 'ms']);
}

export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms >= UNITS[unit] && ms % UNITS[unit] === 0) return `${ms / UNITS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
