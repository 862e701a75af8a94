/**
 * A small least-recently-used map for per-thread memos in the worker pool (compiled templates,
 * parsed DKIM keys). Map keeps insertion order, so the first key is the least recently used.
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  hits = 0;
  misses = 0;

  constructor(private readonly max: number) {}

  /** The cached value for key, or make(key), remembered. make's exceptions are not cached. */
  get(key: K, make: (key: K) => V): V {
    const found = this.map.get(key);
    if (found !== undefined) {
      this.hits++;
      this.map.delete(key);
      this.map.set(key, found);
      return found;
    }
    this.misses++;
    const value = make(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
    return value;
  }

  get size(): number {
    return this.map.size;
  }
}
