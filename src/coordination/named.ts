/**
 * Named objects of a coordination (port.ts: "one name, one budget, one configuration"): the
 * object of a name is made at its first use and handed out again after; a second use with other
 * options is a configuration error and throws. Both implementations keep their rates, pacers,
 * keyed limits and failure windows this way (local.ts, postgres/index.ts).
 */

/** A named object with the options it was made with. */
export interface Named<T> {
  options: string;
  value: T;
}

/** The object of `name`, made at its first use; a second use with other options throws. */
export function named<T>(map: Map<string, Named<T>>, kind: string, name: string, options: object, make: () => T): T {
  // Keys sorted and undefined left out: { burst: undefined, perSecond: 50 } is { perSecond: 50 }.
  const key = JSON.stringify(Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1))));
  const found = map.get(name);
  if (found) {
    if (found.options !== key) throw new Error(`${kind} "${name}" exists with other options (${found.options}, asked ${key})`);
    return found.value;
  }
  const value = make();
  map.set(name, { options: key, value });
  return value;
}
