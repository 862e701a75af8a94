/**
 * What other groups of the PostgreSQL engine do with suppressions inside their own transaction
 * (the shared brief's table): the queue's recordOutcomes suppresses hard bounces as the LMDB
 * engine's queue-outcome.ts does (after the DNS-failure threshold for DNS name failures), checks
 * read the index, and the channel delete removes a channel's suppressions.
 *
 * Every add is INSERT ... ON CONFLICT DO NOTHING on the primary key (channel, mail type,
 * lower-cased address): of two transactions adding one address on any nodes, the second waits for
 * the first and then inserts nothing, so exactly one reports the change and the first reason stays.
 */
import type { RecipientResult } from '../../domain/delivery-result.js';
import { isDnsNameFailure } from '../../domain/dns-failure-rule.js';
import type { MailType, SuppressionReason, SuppressionRecord } from '../../domain/types.js';
import type { Db, Tx } from './client.js';
import { countDnsFailure } from './dns-failure-count.js';

export interface SuppressionAdd {
  channelId: string;
  mailType: MailType;
  email: string;
  reason: SuppressionReason;
}

const keyOf = (s: { channelId: string; mailType: MailType; email: string }) => `${s.channelId}\u0000${s.mailType}\u0000${s.email.toLowerCase()}`;

/**
 * Inserts the suppressions that are absent (the first reason stays), in one statement. Resolves
 * with, per input in order, whether it was newly suppressed; of several inputs for one address
 * only the first can be.
 */
export async function addSuppressions(tx: Db, adds: readonly SuppressionAdd[], now: Date = new Date()): Promise<boolean[]> {
  const first = new Map<string, SuppressionRecord>();
  for (const a of adds) {
    const k = keyOf(a);
    if (!first.has(k)) first.set(k, { channelId: a.channelId, mailType: a.mailType, email: a.email.toLowerCase(), reason: a.reason, createdAt: now.toISOString() });
  }
  if (first.size === 0) return adds.map(() => false);
  // In key order: two transactions adding overlapping addresses wait on each other in one order (no deadlock).
  const records = [...first.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
  const inserted = await tx<{ channel_id: string; mail_type: MailType; email: string }[]>`
    INSERT INTO suppressions (channel_id, mail_type, email, reason, doc)
    SELECT r->>'channelId', r->>'mailType', r->>'email', r->>'reason', r
    FROM jsonb_array_elements(${tx.json(records as never)}::jsonb) AS r
    ON CONFLICT DO NOTHING
    RETURNING channel_id, mail_type, email`;
  const fresh = new Set(inserted.map((r) => keyOf({ channelId: r.channel_id, mailType: r.mail_type, email: r.email })));
  return adds.map((a) => fresh.delete(keyOf(a)));
}

/**
 * Deletes the suppressions that are present (a delete-if-present; with `reason`, only those of
 * that reason), in one statement: of racing deletes exactly one sees a row go. Resolves with, per
 * input in order, whether it removed one; of several inputs for one address only the first can.
 */
export async function removeSuppressions(tx: Db, channelId: string, mailType: MailType, emails: readonly string[], reason?: SuppressionReason): Promise<boolean[]> {
  if (emails.length === 0) return [];
  const lower = [...new Set(emails.map((e) => e.toLowerCase()))];
  const rows = await tx<{ email: string }[]>`
    DELETE FROM suppressions WHERE channel_id = ${channelId} AND mail_type = ${mailType} AND email = ANY(${lower}::text[])
    ${reason ? tx`AND reason = ${reason}` : tx``}
    RETURNING email`;
  const gone = new Set(rows.map((r) => r.email));
  return emails.map((e) => gone.delete(e.toLowerCase()));
}

/**
 * Lifts the suppressions an unsubscribe made (EngagementPort.resubscribe): a conditional delete
 * (reason unsubscribe), so one for another reason stays. Resolves with the recipients lifted, as
 * given, in order (each address once).
 */
export async function removeUnsubscribes(tx: Db, channelId: string, mailType: MailType, recipients: readonly string[]): Promise<string[]> {
  const lifted = await removeSuppressions(tx, channelId, mailType, recipients, 'unsubscribe');
  return recipients.filter((_, i) => lifted[i]);
}

/** Whether the address is suppressed for the channel and mail type (a primary key lookup). */
export async function isSuppressed(db: Db, channelId: string, mailType: MailType, email: string): Promise<boolean> {
  const rows = await db`SELECT 1 FROM suppressions WHERE channel_id = ${channelId} AND mail_type = ${mailType} AND email = ${email.toLowerCase()}`;
  return rows.length > 0;
}

/** Which of the addresses are suppressed for the channel and mail type (lower-cased), in one index scan per address. */
export async function suppressedAmong(db: Db, channelId: string, mailType: MailType, emails: readonly string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const lower = [...new Set(emails.map((e) => e.toLowerCase()))];
  const rows = await db<{ email: string }[]>`
    SELECT email FROM suppressions WHERE channel_id = ${channelId} AND mail_type = ${mailType} AND email = ANY(${lower}::text[])`;
  return new Set(rows.map((r) => r.email));
}

/** One delivery attempt's bounces, for suppressHardBounces. */
export interface AttemptBounces {
  accountId: string;
  channelId: string;
  mailType: MailType;
  /** The job's recipient domain (one job is one domain). */
  domain: string;
  atMs: number;
  /** The attempt's recipients whose outcome is `bounced`, in the job's order. */
  bounced: readonly RecipientResult[];
}

/**
 * Inside recordOutcomes, for the attempts whose message still exists, in order: what LMDB's
 * queue-outcome.ts does per attempt. An attempt with a DNS name failure among its bounces counts
 * one hard DNS failure of its domain (dns-failure-count.ts); every hard bounce (bounceType not
 * 'soft') is then suppressed (reason bounce), except DNS name failures while their domain is
 * below the threshold. Resolves with the recipients newly suppressed per attempt (RecordedOutcome.suppressed).
 */
export async function suppressHardBounces(tx: Tx, attempts: readonly AttemptBounces[], now: Date = new Date()): Promise<string[][]> {
  const adds: SuppressionAdd[] = [];
  const owner: number[] = [];
  for (const [i, a] of attempts.entries()) {
    const reached = a.bounced.some(isDnsNameFailure) ? await countDnsFailure(tx, a) : true;
    for (const r of a.bounced) {
      if (r.bounceType === 'soft' || (!reached && isDnsNameFailure(r))) continue;
      adds.push({ channelId: a.channelId, mailType: a.mailType, email: r.recipient, reason: 'bounce' });
      owner.push(i);
    }
  }
  const out: string[][] = attempts.map(() => []);
  const added = await addSuppressions(tx, adds, now);
  added.forEach((yes, j) => yes && out[owner[j]].push(adds[j].email));
  return out;
}

/**
 * Channel delete (inside its transaction): the channel's suppressions and its engagement report
 * marks go. Resolves with how many rows went.
 */
export async function removeChannelSuppressions(tx: Tx, channelId: string): Promise<number> {
  const s = await tx`DELETE FROM suppressions WHERE channel_id = ${channelId}`;
  const m = await tx`DELETE FROM engagement_report_marks WHERE channel_id = ${channelId}`;
  return s.count + m.count;
}
