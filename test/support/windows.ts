/** Most of the sorted times in any window [x, x + width): how a rate limit is held to its bound. */
export function maxInWindow(sorted: readonly number[], width: number): number {
  let max = 0;
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while (sorted[hi] - sorted[lo] >= width) lo++;
    max = Math.max(max, hi - lo + 1);
  }
  return max;
}
