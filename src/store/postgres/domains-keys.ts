/**
 * The writing verbs of the PostgreSQL engine's sending domains that change its keys and DNS
 * state: setPendingKey, addRsaCompanion, recordCheck. Each reads the record with its row locked
 * (FOR UPDATE), computes the next one with the domain rules (domain/sending-domain.ts), and
 * writes it with its private keys in the same commit: concurrent writers of one domain take
 * turns, each on the record the previous one committed.
 */
import { companionKeyOf, domainKeyOf } from '../../domain/domain-keys.js';
import { applyCheck, keySelectors, wasVerified, type CheckResults, type CompanionKey, type SendingDomain } from '../../domain/sending-domain.js';
import type { NewDkimKey } from '../port/domains.js';
import type { PgContext } from './context.js';
import { lockDomain, putKeys, removeKeys, writeDomain } from './domains-rows.js';

/** A pending key not yet promoted is replaced and its private key deleted (its selector is never used again). */
export async function setPendingKey(ctx: PgContext, id: string, key: NewDkimKey): Promise<SendingDomain | undefined> {
  return ctx.begin(async (tx) => {
    const d = await lockDomain(tx, id);
    if (!d) return undefined;
    const now = new Date().toISOString();
    await removeKeys(tx, id, d.pendingKey ? keySelectors(d.pendingKey) : []);
    await putKeys(tx, id, key);
    return writeDomain(tx, { ...d, pendingKey: domainKeyOf(key, d.name, now), updatedAt: now });
  });
}

/**
 * Conditional on the record as locked: nothing changes (and no key is stored) when the active
 * key was rotated meanwhile, is not ed25519, or has a companion already. The companion of a key
 * that was verified is advisory (domain/sending-domain.ts).
 */
export async function addRsaCompanion(ctx: PgContext, id: string, selector: string, key: NewDkimKey): Promise<SendingDomain | undefined> {
  return ctx.begin(async (tx) => {
    const d = await lockDomain(tx, id);
    if (!d || d.activeKey.selector !== selector || d.activeKey.algorithm !== 'ed25519' || d.activeKey.rsaCompanion) return d;
    const now = new Date().toISOString();
    const rsaCompanion: CompanionKey = { ...companionKeyOf(key, d.name, now), ...(wasVerified(d.activeKey.record) ? { advisory: true as const } : {}) };
    await putKeys(tx, id, key);
    return writeDomain(tx, { ...d, activeKey: { ...d.activeKey, rsaCompanion }, updatedAt: now });
  });
}

/** A DNS check applied to the record as locked; a promoted pending key retires the active one, whose private key goes too. */
export async function recordCheck(ctx: PgContext, id: string, results: CheckResults, at: string): Promise<SendingDomain | undefined> {
  return ctx.begin(async (tx) => {
    const d = await lockDomain(tx, id);
    if (!d) return undefined;
    const { domain, retiredKeys } = applyCheck(d, results, at);
    await removeKeys(tx, id, retiredKeys.map((k) => k.selector));
    return writeDomain(tx, domain);
  });
}
