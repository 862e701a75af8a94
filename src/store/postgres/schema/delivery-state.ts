/**
 * The tables of the delivery-state aggregates (part of migration 1, schema/index.ts). Until the
 * first release every table is created here; afterwards a change is a new migration.
 */
export const SQL = ``;
