/**
 * A verb the PostgreSQL engine does not have yet, while it is being built aggregate by
 * aggregate (issue 32): every call rejects with a clear error. The engine is reachable only
 * from the contract suite until every aggregate is built; this file goes with the last one.
 */
export function pending<T extends object>(aggregate: string): T {
  return new Proxy({} as T, {
    get(_target, verb) {
      if (typeof verb !== 'string' || verb === 'then') return undefined;
      return () => {
        throw new Error(`PostgreSQL engine: ${aggregate}.${verb} is not built yet (issue 32)`);
      };
    },
  });
}
