/**
 * WebhookOutboxPort.claimDue over PostgreSQL: the behaviour of LMDB's claimDue
 * (store/lmdb/webhook-outbox.ts), for several nodes dispatching at once.
 *
 * LMDB keeps its claims in the engine's memory (one process writes the store). Here the claim is
 * in the row, seen by every node: claimed_until_ms (a lease, CLAIM_LEASE_MS after the claim) and
 * claim_token (which claimDue took it). Rows are taken FOR NO KEY UPDATE SKIP LOCKED and then
 * marked, in one transaction, so two claimers never get one entry: a claimer whose snapshot
 * predates another's commit re-checks claimed_until_ms on the newest row version when it locks
 * it (READ COMMITTED), and skips it. A node that dies gives its claims back when the lease ends.
 */
import { randomUUID } from 'node:crypto';
import type { OutboxEntry, Webhook } from '../../domain/webhook.js';
import type { Claim, ClaimRequest } from '../port/webhooks.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';

/**
 * How long a claim holds an entry: far beyond one request (webhooks.timeoutMs is at most 10 s)
 * and its recording, so that only a node that died or lost the database lets it lapse; then
 * another node sends the entry again (at-least-once, receivers dedupe by the entry id).
 */
export const CLAIM_LEASE_MS = 5 * 60_000;

/**
 * Rounds of one claimDue at most: a round that met entries of deleted channels, or heads another
 * claimer holds, looks again for the slots left (claimRounds).
 */
const MAX_ROUNDS = 8;

interface WebhookHeads {
  webhook_id: string;
  doc: Webhook | null;
  signing_key: string | null;
  enabled: boolean | null;
  next_due: number | null;
  due_now: number;
}

interface Candidate {
  webhook_id: string;
  message_id: string;
  seq: number;
  part: number;
  doc: OutboxEntry;
  gone: boolean;
}

export interface ClaimResult {
  claims: Claim[];
  nextDueMs: number | undefined;
  /** The claim token of this call (webhook-outbox.ts keeps it per entry, for the fence). */
  token: string;
}

export async function claimDue(ctx: PgContext, r: ClaimRequest): Promise<ClaimResult> {
  const token = randomUUID();
  const result = await ctx.begin(async (tx) => {
    const heads = await webhooksWithHeads(tx, r.nowMs, r.max);
    const live = heads.filter((h) => h.doc !== null && h.enabled === true && h.signing_key !== null);
    await dropDisabled(tx, heads.filter((h) => !live.includes(h)).map((h) => h.webhook_id));
    let nextDueMs: number | undefined;
    for (const h of live) if (h.next_due !== null) nextDueMs = Math.min(nextDueMs ?? h.next_due, h.next_due);
    const claims = await claimRounds(tx, r, live, token);
    return { claims, nextDueMs };
  });
  return { ...result, token };
}

/**
 * Every webhook that has entries waiting (a skip-scan of webhook_outbox_due: one probe per
 * webhook), with its record and key (null when deleted), the earliest head due after now, and
 * how many heads are due and unclaimed now (counted up to max).
 */
async function webhooksWithHeads(tx: Tx, nowMs: number, max: number): Promise<WebhookHeads[]> {
  return tx<WebhookHeads[]>`
    WITH RECURSIVE ids AS (
      (SELECT webhook_id FROM webhook_outbox WHERE head ORDER BY webhook_id LIMIT 1)
      UNION ALL
      SELECT (SELECT o.webhook_id FROM webhook_outbox o WHERE o.head AND o.webhook_id > ids.webhook_id ORDER BY o.webhook_id LIMIT 1)
      FROM ids WHERE ids.webhook_id IS NOT NULL
    )
    SELECT ids.webhook_id, w.doc, w.signing_key, w.enabled,
      (SELECT o.due_at_ms FROM webhook_outbox o
       WHERE o.webhook_id = ids.webhook_id AND o.head AND o.due_at_ms > ${nowMs}
       ORDER BY o.due_at_ms LIMIT 1) AS next_due,
      (SELECT count(*) FROM (
         SELECT 1 FROM webhook_outbox o
         WHERE o.webhook_id = ids.webhook_id AND o.head AND o.due_at_ms <= ${nowMs} AND o.claimed_until_ms <= ${nowMs}
         LIMIT ${max}) AS d)::int8 AS due_now
    FROM ids LEFT JOIN webhooks w ON w.id = ids.webhook_id
    WHERE ids.webhook_id IS NOT NULL
    ORDER BY ids.webhook_id`;
}

/**
 * Entries of webhooks deleted or disabled meanwhile (left by an event appended beside the
 * delete or the disabling): dropped, nothing is posted for them. Conditional on the webhook's
 * state at this statement, so a webhook enabled again since the look-up keeps its new entries.
 */
async function dropDisabled(tx: Tx, webhookIds: string[]): Promise<void> {
  if (webhookIds.length === 0) return;
  await tx`
    DELETE FROM webhook_outbox o WHERE o.webhook_id = ANY(${webhookIds}::text[])
      AND NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.id = o.webhook_id AND w.enabled)`;
}

/**
 * Claims per webhook up to its free slots and at most r.max in all, webhooks in id order (as
 * LMDB's skip-scan). Each round plans how many to take of each webhook from the due counts, so
 * that no row is locked beyond what is claimed (a locked row is skipped by the other claimers).
 * Heads about a deleted channel are not claimed: their message's entries for that webhook are
 * dropped (its tombstone committed before the DELETE's 204), and another round fills the slots.
 */
async function claimRounds(tx: Tx, r: ClaimRequest, live: WebhookHeads[], token: string): Promise<Claim[]> {
  const byId = new Map(live.map((h) => [h.webhook_id, h]));
  const slots = new Map(live.map((h) => [h.webhook_id, Object.hasOwn(r.freeSlots.byWebhook, h.webhook_id) ? r.freeSlots.byWebhook[h.webhook_id] : r.freeSlots.default]));
  const due = new Map(live.map((h) => [h.webhook_id, h.due_now]));
  const claims: Claim[] = [];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const plan = planRound(live, slots, due, r.max - claims.length);
    if (plan.length === 0) break;
    const found = await lockDueHeads(tx, plan, r.nowMs);
    const taken = found.filter((c) => !c.gone);
    await markClaimed(tx, taken, r.nowMs + CLAIM_LEASE_MS, token);
    for (const c of taken) {
      const h = byId.get(c.webhook_id)!;
      claims.push({ webhook: h.doc!, secret: h.signing_key!, entry: c.doc });
      slots.set(c.webhook_id, (slots.get(c.webhook_id) ?? 0) - 1);
    }
    const gone = found.filter((c) => c.gone);
    if (!afterRound(plan, found, due) && gone.length === 0) break;
    if (gone.length > 0) await dropMessages(tx, gone);
  }
  return claims;
}

/**
 * Counts a round's finds against the due counts: a webhook whose heads ran out before its n
 * (the others claimed or locked by another claimer) has none left for this call; a dropped
 * head's place is looked for again (the due count stopped at max). True when some webhook ran
 * short, so that another round gives its share to the webhooks after it.
 */
function afterRound(plan: { webhook_id: string; n: number }[], found: Candidate[], due: Map<string, number>): boolean {
  let short = false;
  for (const p of plan) {
    const got = found.filter((c) => c.webhook_id === p.webhook_id);
    const dropped = got.filter((c) => c.gone).length;
    if (got.length < p.n) short = true;
    due.set(p.webhook_id, got.length < p.n ? 0 : (due.get(p.webhook_id) ?? 0) - p.n + dropped);
  }
  return short;
}

/** The entries of a deleted channel's messages for their webhooks: none is posted. */
async function dropMessages(tx: Tx, gone: Candidate[]): Promise<void> {
  const pairs = gone.map((g) => ({ webhook_id: g.webhook_id, message_id: g.message_id }));
  await tx`
    DELETE FROM webhook_outbox o USING jsonb_to_recordset(${tx.json(pairs as never)}::jsonb) AS g(webhook_id text, message_id text)
    WHERE o.webhook_id = g.webhook_id AND o.message_id = g.message_id`;
}

/** How many to take of each webhook, in id order: its free slots, its due entries, what is left of max. */
function planRound(live: WebhookHeads[], slots: Map<string, number>, due: Map<string, number>, room: number): { webhook_id: string; n: number; ord: number }[] {
  const plan: { webhook_id: string; n: number; ord: number }[] = [];
  live.forEach((h, ord) => {
    const n = Math.min(slots.get(h.webhook_id) ?? 0, due.get(h.webhook_id) ?? 0, room);
    if (n <= 0) return;
    plan.push({ webhook_id: h.webhook_id, n, ord });
    room -= n;
  });
  return plan;
}

/**
 * The due, unclaimed heads of each planned webhook in due order, up to its n, locked (SKIP
 * LOCKED: what another claimer holds right now is left to it).
 */
async function lockDueHeads(tx: Tx, plan: { webhook_id: string; n: number; ord: number }[], nowMs: number): Promise<Candidate[]> {
  return tx<Candidate[]>`
    SELECT o.webhook_id, o.message_id, o.seq, o.part, o.doc,
      EXISTS (SELECT 1 FROM channels ch WHERE ch.id = o.channel_id AND ch.deleted_at_ms IS NOT NULL) AS gone
    FROM jsonb_to_recordset(${tx.json(plan as never)}::jsonb) AS p(webhook_id text, n int4, ord int4)
    CROSS JOIN LATERAL (
      SELECT x.webhook_id, x.message_id, x.seq, x.part, x.doc, x.channel_id, x.due_at_ms FROM webhook_outbox x
      WHERE x.webhook_id = p.webhook_id AND x.head AND x.due_at_ms <= ${nowMs} AND x.claimed_until_ms <= ${nowMs}
      ORDER BY x.due_at_ms, x.message_id, x.seq, x.part
      LIMIT p.n
      FOR NO KEY UPDATE OF x SKIP LOCKED
    ) o
    ORDER BY p.ord, o.due_at_ms, o.message_id, o.seq, o.part`;
}

/** Marks the locked entries claimed until the lease ends, by this call's token. */
async function markClaimed(tx: Tx, taken: Candidate[], untilMs: number, token: string): Promise<void> {
  if (taken.length === 0) return;
  const keys = taken.map((c) => ({ webhook_id: c.webhook_id, message_id: c.message_id, seq: c.seq, part: c.part }));
  await tx`
    UPDATE webhook_outbox o SET claimed_until_ms = ${untilMs}, claim_token = ${token}
    FROM jsonb_to_recordset(${tx.json(keys as never)}::jsonb) AS k(webhook_id text, message_id text, seq int8, part int4)
    WHERE o.webhook_id = k.webhook_id AND o.message_id = k.message_id AND o.seq = k.seq AND o.part = k.part`;
}
