/**
 * How a sending domain and its private keys are written, shared by the domains' writing verbs:
 * the record in doc with the columns kept from it (recheck), the private keys in dkim_keys.
 */
import { needsRecheck, type SendingDomain } from '../../domain/sending-domain.js';
import type { NewDkimKey } from '../port/domains.js';
import type { Tx } from './client.js';

/** Replaces the domain's record (its row locked by the caller or by this UPDATE); the record as written. */
export async function writeDomain(tx: Tx, d: SendingDomain): Promise<SendingDomain> {
  await tx`UPDATE domains SET doc = ${tx.json(d)}, recheck = ${needsRecheck(d)} WHERE id = ${d.id}`;
  return d;
}

/** The key's private key and its companion's, in one INSERT (a selector stored already is replaced, as LMDB's put). */
export async function putKeys(tx: Tx, domainId: string, key: NewDkimKey): Promise<void> {
  const rows = [key, ...(key.rsaCompanion ? [key.rsaCompanion] : [])].map((k) => ({ domain_id: domainId, selector: k.selector, private_key_pem: k.privateKeyPem }));
  await tx`
    INSERT INTO dkim_keys ${tx(rows, 'domain_id', 'selector', 'private_key_pem')}
    ON CONFLICT (domain_id, selector) DO UPDATE SET private_key_pem = excluded.private_key_pem`;
}

export async function removeKeys(tx: Tx, domainId: string, selectors: readonly string[]): Promise<void> {
  if (selectors.length > 0) await tx`DELETE FROM dkim_keys WHERE domain_id = ${domainId} AND selector = ANY(${[...selectors]}::text[])`;
}

/** The domain's row locked (FOR UPDATE) for a read-modify-write in one commit, or undefined. */
export async function lockDomain(tx: Tx, id: string): Promise<SendingDomain | undefined> {
  const [row] = await tx<{ doc: SendingDomain }[]>`SELECT doc FROM domains WHERE id = ${id} FOR UPDATE`;
  return row?.doc;
}
