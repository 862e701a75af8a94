/**
 * The broadcasts tables' rows and the port's records (schema/messages-broadcasts.ts): the record
 * is the row's doc; state, created_ms and the ids are columns beside it, written with it.
 */
import type postgres from 'postgres';
import type { BroadcastRecord } from '../port/broadcasts.js';
import type { Db, Tx } from './client.js';

/** A record as a jsonb parameter (records are plain JSON data: ISO strings, no undefined kept). */
export function jsonParam(db: Db, value: unknown): postgres.Parameter {
  return db.json(value as postgres.JSONValue);
}

/** Writes the record back whole (its columns with it): the caller holds the row's lock. */
export async function putBroadcast(tx: Tx, b: BroadcastRecord): Promise<void> {
  await tx`UPDATE broadcasts SET state = ${b.state}, doc = ${jsonParam(tx, b)} WHERE id = ${b.id}`;
}

/**
 * The record, its row locked FOR UPDATE until the transaction ends: the writers of one broadcast
 * (a batch's progress, a cancel, a message ending unfinished) take this lock first, so each reads
 * the record as the previous one committed it, and they never wait on each other in another order.
 */
export async function lockBroadcast<C = unknown>(tx: Tx, id: string): Promise<BroadcastRecord<C> | undefined> {
  const [row] = await tx<{ doc: BroadcastRecord<C> }[]>`SELECT doc FROM broadcasts WHERE id = ${id} FOR UPDATE`;
  return row?.doc;
}
