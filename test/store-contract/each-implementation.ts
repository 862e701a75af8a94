/**
 * The loop both contract harnesses share (engines.ts for the store port, coordinations.ts for
 * the coordination port): `body` runs once per implementation, inside
 * describe(`${title} [name]`), with its context opened before each test and disposed after it.
 */
import { afterEach, beforeEach, describe } from 'vitest';

export interface ImplementationContext {
  open(): Promise<void>;
  dispose(): Promise<void>;
}

export function eachImplementation<I extends { name: string }, C extends ImplementationContext>(
  title: string,
  implementations: readonly I[],
  contextOf: (impl: I) => C,
  body: (ctx: C) => void,
): void {
  for (const impl of implementations) {
    describe(`${title} [${impl.name}]`, () => {
      const ctx = contextOf(impl);
      beforeEach(async () => {
        await ctx.open();
      });
      afterEach(async () => {
        await ctx.dispose();
      });
      body(ctx);
    });
  }
}
