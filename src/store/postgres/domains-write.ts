/**
 * The writing verbs of the PostgreSQL engine's sending domains that change the domain itself:
 * create (under the per-account limit and the unique name), setChannels, delete.
 */
import { newDomainRecord } from '../../domain/domain-keys.js';
import { domainLimitExceeded, duplicateName } from '../../domain/domain-rules.js';
import { AppError } from '../../domain/errors.js';
import { needsRecheck, type SendingDomain } from '../../domain/sending-domain.js';
import type { NewDomain } from '../port/domains.js';
import { lockAccount } from './accounts-tx.js';
import type { Tx } from './client.js';
import { lockLiveChannels } from './channels-tx.js';
import { sqlState, type PgContext } from './context.js';
import { putKeys } from './domains-rows.js';
import { removeDomainRoutes } from './inbound-routes-tx.js';

/**
 * Throws channel_not_found unless every id is a live channel of the account, and keeps them
 * locked (FOR SHARE) until the commit: a channel being deleted is never linked (its delete
 * waits for this commit and then unlinks it, or this waits for the delete and refuses).
 */
async function assertLiveChannels(tx: Tx, accountId: string, channelIds: readonly string[]): Promise<void> {
  const live = await lockLiveChannels(tx, channelIds, accountId);
  const missing = channelIds.find((id) => !live.has(id));
  if (missing !== undefined) throw new AppError('channel_not_found', `Channel ${missing} does not exist`);
}

/**
 * Atomic across nodes, refusing in the port's order: the account's row is locked first
 * (lockAccount), so the name check and the count that follow see every creation that committed
 * before and none can commit until this one does; the unique index on (account_id, name) stays
 * as the last word (a 23505 is the same duplicate 422).
 */
export async function createDomain(ctx: PgContext, input: NewDomain): Promise<SendingDomain> {
  const d = newDomainRecord(input, new Date().toISOString());
  try {
    await ctx.begin(async (tx) => {
      await lockAccount(tx, input.accountId);
      const [taken] = await tx`SELECT 1 FROM domains WHERE account_id = ${input.accountId} AND name = ${input.name}`;
      if (taken) throw duplicateName(input.name);
      const [{ n }] = await tx<{ n: number }[]>`SELECT count(*)::int8 AS n FROM domains WHERE account_id = ${input.accountId}`;
      if (n >= input.maxPerAccount) throw domainLimitExceeded(input.maxPerAccount);
      await assertLiveChannels(tx, input.accountId, d.channelIds);
      await tx`
        INSERT INTO domains (id, account_id, name, created_at_ms, recheck, doc)
        VALUES (${d.id}, ${d.accountId}, ${d.name}, ${Date.parse(d.createdAt)}, ${needsRecheck(d)}, ${tx.json(d)})`;
      await putKeys(tx, d.id, input.key);
    });
  } catch (err) {
    if (sqlState(err) === '23505') throw duplicateName(input.name);
    throw err;
  }
  return d;
}

/**
 * The channels are locked (FOR SHARE) before the domain's row is updated: the order the channel
 * delete takes (its channel row, then the domains that link it), so the two never deadlock.
 */
export async function setDomainChannels(ctx: PgContext, id: string, channelIds: string[]): Promise<SendingDomain | undefined> {
  return ctx.begin(async (tx) => {
    const [owner] = await tx<{ account_id: string }[]>`SELECT account_id FROM domains WHERE id = ${id}`;
    if (!owner) return undefined;
    await assertLiveChannels(tx, owner.account_id, channelIds);
    const patch = { channelIds: [...channelIds], deletedChannelIds: [], updatedAt: new Date().toISOString() };
    const [row] = await tx<{ doc: SendingDomain }[]>`UPDATE domains SET doc = doc || ${tx.json(patch)} WHERE id = ${id} RETURNING doc`;
    return row?.doc;
  });
}

/** The record, its name (the row), its private keys and its inbound routes, in one commit. */
export async function deleteDomain(ctx: PgContext, id: string): Promise<boolean> {
  return ctx.begin(async (tx) => {
    const gone = await tx`DELETE FROM domains WHERE id = ${id} RETURNING id`;
    if (gone.length === 0) return false;
    await tx`DELETE FROM dkim_keys WHERE domain_id = ${id}`;
    await removeDomainRoutes(tx, id);
    return true;
  });
}
