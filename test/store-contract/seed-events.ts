/**
 * How the contract suite puts synthetic events into an engine's log. The port has no append verb
 * (an event is appended by the verb whose change it records), and a real send cannot make the
 * histories these tests need (old and late timestamps, bounces after deliveries, many accounts),
 * so each engine names here the way its own tests append events: through its one real writer,
 * which keeps its indexes and counters as a real append does. A second engine adds its seeder to
 * SEEDERS beside its factory in engines.ts.
 */
import type { EventRecord } from '../../src/domain/types.js';
import type { LmdbStore } from '../../src/store/lmdb/engine.js';
import type { StorePort } from '../../src/store/port/index.js';
import { appendEvents, type EventDraft } from '../support/lmdb-events.js';
import type { EngineContext } from './engines.js';

export type { EventDraft };

export interface SeedOptions {
  /** The accepted events among the drafts stand for messages still queued for delivery. */
  queued?: boolean;
  /** Drafts per commit (default: all in one). */
  batch?: number;
}

type Seeder = (store: StorePort, drafts: readonly EventDraft[], o: SeedOptions) => Promise<EventRecord[]>;

const SEEDERS: Record<string, Seeder> = {
  lmdb: (store, drafts, o) => appendEvents(store as LmdbStore, drafts, { batch: o.batch ?? Math.max(1, drafts.length), queued: o.queued }),
};

/** Appends the drafts to the context's store in order; returns them as stored (with their seqs). */
export function seedEvents(ctx: EngineContext, drafts: readonly EventDraft[], o: SeedOptions = {}): Promise<EventRecord[]> {
  const seeder = SEEDERS[ctx.engine.name];
  if (!seeder) throw new Error(`no event seeder for the ${ctx.engine.name} engine (test/store-contract/seed-events.ts)`);
  return seeder(ctx.store, drafts, o);
}
