/**
 * The writes other groups' transactions make on inbound routes (schema/inbound.ts): the channel
 * delete and the domain delete remove their routes in their own commit (LMDB's
 * removeChannelRoutesInTxn and removeDomainRoutesInTxn).
 */
import type { Tx } from './client.js';

/** Inside the channel delete: the channel's routes go with it, with their keys. */
export async function removeChannelRoutes(tx: Tx, channelId: string): Promise<void> {
  await tx`DELETE FROM inbound_routes WHERE channel_id = ${channelId}`;
}

/** Inside the domain delete: the routes on the domain go with it. */
export async function removeDomainRoutes(tx: Tx, domainId: string): Promise<void> {
  await tx`DELETE FROM inbound_routes WHERE domain_id = ${domainId}`;
}
