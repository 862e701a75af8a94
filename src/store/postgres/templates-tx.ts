/**
 * The write other groups' transactions make on templates (schema/templates.ts): the channel
 * delete unlinks its channel from the account's templates in its own commit (LMDB's
 * unlinkChannelFromTemplatesInTxn).
 */
import type { StoredTemplate } from '../../domain/template.js';
import type { Tx } from './client.js';

/** Inside the channel delete, after the channel's row is locked (the order template updates take them in). */
export async function unlinkChannelFromTemplates(tx: Tx, accountId: string, channelId: string, iso: string): Promise<void> {
  const rows = await tx<{ doc: StoredTemplate }[]>`
    SELECT doc FROM templates WHERE account_id = ${accountId} AND doc->'channelIds' ? ${channelId} ORDER BY id FOR NO KEY UPDATE`;
  for (const { doc } of rows) {
    const next: StoredTemplate = { ...doc, channelIds: doc.channelIds.filter((c) => c !== channelId), updatedAt: iso };
    await tx`UPDATE templates SET doc = ${tx.json(next as never)} WHERE id = ${doc.id}`;
  }
}
