/**
 * Freezes an object and everything it holds: the loaded config and the cached domain records are
 * handed to many readers as the same object, so none of them may change it. A part already frozen
 * is not walked again (a cached record's parts are frozen once).
 */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
