/**
 * The tables of stored templates (migration 3, schema/index.ts; issue 34). Ids are text in the
 * "C" collation, as elsewhere; no foreign keys to other groups' tables: the channel delete
 * unlinks its channel from the templates itself (templates-tx.ts).
 */
export const SQL = `
-- The StoredTemplate record in doc (channelIds, activeVersion, latestVersion included); the
-- alias in a column for its unique index and the look-up of a send by alias.
CREATE TABLE templates (
  id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  alias text COLLATE "C",
  name_lc text NOT NULL,
  created_at_ms int8 NOT NULL,
  doc jsonb NOT NULL
);
-- An alias names one template of the account; the last word of the duplicate check (a 23505 is the same 422).
CREATE UNIQUE INDEX templates_alias ON templates (account_id, alias) WHERE alias IS NOT NULL;
-- list (creation order) and the limit's count.
CREATE INDEX templates_account ON templates (account_id, created_at_ms, id);
-- Every version of a template, never changed once stored (TemplateVersion in doc).
CREATE TABLE template_versions (
  template_id text COLLATE "C" NOT NULL,
  version int4 NOT NULL,
  doc jsonb NOT NULL,
  PRIMARY KEY (template_id, version)
);
`;
