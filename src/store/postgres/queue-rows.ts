/**
 * The delivery queue's rows and the port's records (schema/queue.ts): the job as the port shows
 * it is the row's doc; a lease adds the fencing columns (owner, generation) to it.
 */
import type postgres from 'postgres';
import type { DeliveryJob } from '../../domain/types.js';
import type { LeasedJob } from '../port/queue.js';
import type { Db } from './client.js';

/** The columns a lease returns with the doc. */
export interface LeasedRow {
  id: string;
  lease_owner: string;
  lease_generation: number;
  doc: DeliveryJob;
}

/** The doc as a jsonb parameter (records are plain JSON data: ISO strings, no undefined kept). */
export function jsonb(db: Db, value: unknown): postgres.Parameter {
  return db.json(value as postgres.JSONValue);
}

export function leasedJob(row: LeasedRow): LeasedJob {
  return { ...(row.doc as LeasedJob), leaseOwner: row.lease_owner, leaseGeneration: row.lease_generation };
}

/** A job's times as the port's records keep them (ISO strings) and the columns do (ms). */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The job without the lease fields a LeasedJob carries: what doc holds. */
export function docOf(job: DeliveryJob): DeliveryJob {
  const { leaseOwner: _owner, leaseGeneration: _generation, ...rest } = job as LeasedJob;
  return rest;
}
