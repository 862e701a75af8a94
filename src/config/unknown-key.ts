/**
 * What an unknown configuration key or POSTRIDER_ variable is told: a section (`http`) given a
 * value that is not an object is a wrong type, not an unknown key; a key one or two letters away
 * from a real one, or spelled in another case or with `_`/`-`, gets a "did you mean".
 */
import type { ConfigKey } from './keys.js';

/** The problem of `keyPath` in the file, which names no key. */
export function unknownFileKey(keyPath: string, keys: readonly ConfigKey[]): string {
  const inside = keys.filter((k) => k.path.startsWith(`${keyPath}.`)).map((k) => k.path);
  if (inside.length > 0) {
    const shown = inside.length > 3 ? `${inside.slice(0, 3).join(', ')}, …` : inside.join(', ');
    return `"${keyPath}" must be an object of its keys (${shown})`;
  }
  const near = nearest(keyPath, keys.map((k) => k.path));
  return `unknown key "${keyPath}"` + (near ? ` (did you mean "${near}"?)` : '');
}

/** The problem of the environment variable `name`, which names no key. */
export function unknownVariable(name: string, keys: readonly ConfigKey[]): string {
  const near = nearest(name, keys.map((k) => k.env));
  return `unknown variable ${name}` + (near ? ` (did you mean ${near}?)` : '');
}

/**
 * The candidate spelled the same but for case, `_`/`-` and the unit `Ms` (delivery.maxAge), else
 * the one at most two edits away.
 */
function nearest(given: string, candidates: readonly string[]): string | null {
  const plain = (s: string) => s.toLowerCase().replace(/[_-]/g, '');
  const same = candidates.find((c) => plain(c) === plain(given) || plain(c) === `${plain(given)}ms`);
  if (same) return same;
  let best: { candidate: string; distance: number } | null = null;
  for (const candidate of candidates) {
    const distance = editDistance(given.toLowerCase(), candidate.toLowerCase());
    if (distance <= 2 && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate ?? null;
}

/** Levenshtein distance (insertions, deletions, substitutions), one row at a time. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}
