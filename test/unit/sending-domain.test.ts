import { describe, expect, it } from 'vitest';
import { applyCheck, nextRecordState, type DnsRecordState, type SendingDomain } from '../../src/domain/sending-domain.js';

const AT = '2026-01-01T00:00:00.000Z';
const record = (status: DnsRecordState['status'], value = 'v'): DnsRecordState => ({ type: 'txt', host: 'h', value, status, lastCheckedAt: null });

function domain(over: Partial<SendingDomain> = {}): SendingDomain {
  return {
    id: 'd',
    accountId: 'a',
    name: 'acme.com',
    createdAt: AT,
    updatedAt: AT,
    verified: true,
    channelIds: [],
    deletedChannelIds: [],
    activeKey: { selector: 'old', algorithm: 'rsa', createdAt: AT, record: record('verified') },
    pendingKey: null,
    retiredKeys: [],
    returnPath: [{ ...record('verified'), type: 'mx', value: '10 mx.host' }],
    ...over,
  };
}

const rp = (outcome: 'match' | 'mismatch' | 'error') => [{ record: { type: 'mx' as const, host: 'h', value: '10 mx.host' }, outcome }];

describe('record status transitions', () => {
  it.each([
    ['pending', 'match', 'verified'],
    ['pending', 'mismatch', 'failed'],
    ['failed', 'mismatch', 'failed'],
    ['failed', 'match', 'verified'],
    ['verified', 'mismatch', 'failing'],
    ['failing', 'mismatch', 'failing'],
    ['failing', 'match', 'verified'],
  ] as const)('%s + %s → %s, stamped with the check time', (from, outcome, to) => {
    expect(nextRecordState(record(from), outcome, AT)).toEqual({ ...record(to), lastCheckedAt: AT });
  });

  it('leaves the record untouched, lastCheckedAt included, on a temporary error', () => {
    const r = { ...record('verified'), lastCheckedAt: '2025-01-01T00:00:00.000Z' };
    expect(nextRecordState(r, 'error', AT)).toBe(r);
  });
});

describe('applyCheck', () => {
  it('unverifies the domain when a required record fails', () => {
    const { domain: next } = applyCheck(domain(), { keys: { old: 'match' }, returnPath: rp('mismatch') }, AT);
    expect(next.verified).toBe(false);
    expect(next.returnPath[0].status).toBe('failing');
  });

  it('promotes a pending key found in DNS and retires the active one', () => {
    const pendingKey = { selector: 'new', algorithm: 'ed25519' as const, createdAt: AT, record: record('pending', 'new') };
    const { domain: next, retiredKeys: [retired] } = applyCheck(domain({ pendingKey }), { keys: { old: 'match', new: 'match' }, returnPath: rp('match') }, AT);
    expect(next.activeKey.selector).toBe('new');
    expect(next.pendingKey).toBeNull();
    expect(retired).toMatchObject({ selector: 'old', retiredAt: AT });
    expect(next.retiredKeys.map((k) => k.selector)).toEqual(['old']);
    expect(next.verified).toBe(true);
  });

  it('ignores results for keys the domain no longer has', () => {
    const { domain: next } = applyCheck(domain(), { keys: { gone: 'mismatch' }, returnPath: rp('match') }, AT);
    expect(next.activeKey.record.status).toBe('verified');
    expect(next.activeKey.record.lastCheckedAt).toBeNull();
  });

  it('starts a reconfigured return-path record as new instead of inheriting the old status', () => {
    const results = { keys: { old: 'match' as const }, returnPath: [{ record: { type: 'mx' as const, host: 'h', value: '10 new.host' }, outcome: 'error' as const }] };
    const { domain: next } = applyCheck(domain(), results, AT);
    expect(next.returnPath).toEqual([{ type: 'mx', host: 'h', value: '10 new.host', status: 'pending', lastCheckedAt: null }]);
    expect(next.verified).toBe(false);
  });
});

describe('applyCheck with an RSA companion (dual signing, RFC 8463 3)', () => {
  const edKey = (selector: string, status: DnsRecordState['status'], companion: DnsRecordState['status'], advisory = false) => ({
    selector,
    algorithm: 'ed25519' as const,
    createdAt: AT,
    record: record(status, selector),
    rsaCompanion: { selector: `${selector}rsa`, createdAt: AT, record: record(companion, `${selector}rsa`), ...(advisory ? { advisory: true as const } : {}) },
  });

  it('verifies the domain only when both records of the active pair are verified', () => {
    const d = domain({ activeKey: edKey('k', 'pending', 'pending'), verified: false });
    expect(applyCheck(d, { keys: { k: 'match', krsa: 'mismatch' }, returnPath: rp('match') }, AT).domain.verified).toBe(false);
    expect(applyCheck(d, { keys: { k: 'mismatch', krsa: 'match' }, returnPath: rp('match') }, AT).domain.verified).toBe(false);
    const both = applyCheck(d, { keys: { k: 'match', krsa: 'match' }, returnPath: rp('match') }, AT).domain;
    expect([both.verified, both.activeKey.rsaCompanion?.record.status]).toEqual([true, 'verified']);
  });

  it('an advisory companion (added to a key verified without it) does not count for verified', () => {
    const d = domain({ activeKey: edKey('k', 'verified', 'pending', true) });
    const { domain: next } = applyCheck(d, { keys: { k: 'match', krsa: 'mismatch' }, returnPath: rp('match') }, AT);
    expect([next.verified, next.activeKey.rsaCompanion?.record.status]).toEqual([true, 'failed']);
  });

  it('promotes a pending pair only when both its records are found, and retires the active key with its companion', () => {
    const d = domain({ activeKey: edKey('a', 'verified', 'verified'), pendingKey: edKey('b', 'pending', 'pending') });
    const half = applyCheck(d, { keys: { a: 'match', arsa: 'match', b: 'match', brsa: 'mismatch' }, returnPath: rp('match') }, AT);
    expect([half.domain.activeKey.selector, half.retiredKeys]).toEqual(['a', []]);
    const full = applyCheck(half.domain, { keys: { a: 'match', arsa: 'match', b: 'match', brsa: 'match' }, returnPath: rp('match') }, AT);
    expect(full.domain.activeKey.selector).toBe('b');
    expect(full.domain.retiredKeys.map((k) => [k.selector, k.algorithm])).toEqual([['a', 'ed25519'], ['arsa', 'rsa']]);
    expect(full.retiredKeys[0]?.selector).toBe('a');
  });
});
