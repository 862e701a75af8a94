/**
 * The fields of an object that have a value: stored records and event details keep no
 * `undefined` keys (msgpack would store them, and a merge would overwrite a value with nothing).
 */
export function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
