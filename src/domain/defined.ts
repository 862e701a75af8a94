/**
 * The fields of an object that have a value: stored records and event details keep no
 * `undefined` keys (msgpack would store them, and a merge would overwrite a value with nothing).
 */
export function definedOnly<T extends object>(o: T): Partial<T> {
  // A loop rather than Object.fromEntries(Object.entries(o).filter(...)), which built an array
  // per field and two more per call, for every delivery attempt and finished message on the main
  // thread (bench/alloc.mjs). Callers pass literals: no key is `__proto__`, which an assignment
  // would take for the prototype.
  const out: Partial<T> = {};
  for (const key of Object.keys(o) as (keyof T)[]) if (o[key] !== undefined) out[key] = o[key];
  return out;
}
