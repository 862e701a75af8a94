import { randomUUID } from 'node:crypto';

/** Resource ids are UUIDs (RFC 9562); a malformed id names no resource, so it is a 404, never a lookup. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(s: string): boolean {
  return UUID.test(s);
}

/**
 * A new id for a record made at a high rate (a message, its delivery jobs, a webhook outbox
 * entry, a received message): a UUIDv7 (RFC 9562 5.7), the Unix time in milliseconds in its
 * first 48 bits, then the version, and 74 random bits from randomUUID (a v4 whose first 48
 * random bits the time replaces). Ids made close in time sort next to each other, so the keys a
 * commit adds share B-tree leaves (LMDB, PostgreSQL's indexes) instead of landing on a random
 * leaf each: with v4 ids a submission over SMTP wrote 558-615 KiB to the data file per message
 * at 20 connections, with these 153-163 KiB (bench/RESULTS.md, issue 36). A message's id tells
 * its creation time to the millisecond, which its createdAt already tells its account.
 */
export function timeOrderedUuid(nowMs: number = Date.now()): string {
  const t = Math.floor(nowMs).toString(16).padStart(12, '0');
  // randomUUID(): xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx; from index 15 on, 74 random bits and
  // the RFC 9562 variant, which v7 shares.
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${randomUUID().slice(15)}`;
}
