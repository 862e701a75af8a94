/**
 * How the contract suite puts synthetic events into an engine's log. The port has no append verb
 * (an event is appended by the verb whose change it records), and a real send cannot make the
 * histories these tests need (old and late timestamps, bounces after deliveries, many accounts),
 * so the suite seeds through the engine fixture (support/engine-fixtures.ts, seedEvents): each
 * engine's one real writer, which keeps its indexes and counters as a real append does. A second
 * engine adds its seeder there.
 */
import type { EventRecord } from '../../src/domain/types.js';
import { seedEvents as seedStore, type EventDraft } from '../support/engine-fixtures.js';
import type { EngineContext } from './engines.js';

export type { EventDraft };

export interface SeedOptions {
  /** The accepted events among the drafts stand for messages still queued for delivery. */
  queued?: boolean;
  /** Drafts per commit (default: all in one). */
  batch?: number;
}

/** Appends the drafts to the context's store in order; returns them as stored (with their seqs). */
export function seedEvents(ctx: EngineContext, drafts: readonly EventDraft[], o: SeedOptions = {}): Promise<EventRecord[]> {
  return seedStore(ctx.store, drafts, { batch: o.batch ?? Math.max(1, drafts.length), queued: o.queued });
}
