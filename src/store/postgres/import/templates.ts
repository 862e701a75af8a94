/** Importing stored templates and their versions (issue 34), as repos/templates.ts writes them (schema/templates.ts). */
import type { TransferRecords } from '../../port/transfer.js';
import type { Tx } from '../client.js';

export async function writeTemplates(tx: Tx, records: TransferRecords['templates'][]): Promise<void> {
  const rows = records.map(({ template: t }) => ({
    id: t.id,
    account_id: t.accountId,
    alias: t.alias,
    name_lc: t.name.toLowerCase(),
    created_at_ms: Date.parse(t.createdAt),
    doc: t,
  }));
  await tx`
    INSERT INTO templates (id, account_id, alias, name_lc, created_at_ms, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(id text, account_id text, alias text, name_lc text, created_at_ms int8, doc jsonb)`;
}

export async function writeTemplateVersions(tx: Tx, records: TransferRecords['templateVersions'][]): Promise<void> {
  const rows = records.map(({ templateId, version }) => ({ template_id: templateId, version: version.version, doc: version }));
  await tx`
    INSERT INTO template_versions (template_id, version, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(template_id text, version int4, doc jsonb)`;
}
