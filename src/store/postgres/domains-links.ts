/**
 * The links between sending domains and channels, as the channel deletion changes them. A
 * domain's links live in its record (doc.channelIds, doc.deletedChannelIds): an account has few
 * domains (config.limits.domainsPerAccount), so the account's rows are the index.
 */
import type { Tx } from './client.js';

/**
 * Inside the channel delete's transaction (after the tombstone's UPDATE): the channel may no
 * longer send from any domain; the domains that linked it list it as deleted (spec 2.2) until
 * the next setChannels. One UPDATE of the account's domains that link it.
 */
export async function unlinkChannelFromDomains(tx: Tx, accountId: string, channelId: string, at: string): Promise<number> {
  const rows = await tx`
    UPDATE domains SET doc = jsonb_set(
        jsonb_set(doc, '{channelIds}', (doc->'channelIds') - ${channelId}::text),
        '{deletedChannelIds}', (doc->'deletedChannelIds') || jsonb_build_array(${channelId}::text)
      ) || jsonb_build_object('updatedAt', ${at}::text)
    WHERE account_id = ${accountId} AND doc->'channelIds' @> jsonb_build_array(${channelId}::text)
    RETURNING id`;
  return rows.length;
}
