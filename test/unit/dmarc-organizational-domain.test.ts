import { describe, expect, it } from 'vitest';
import { dmarcInheritedFrom, dmarcRecord } from '../../src/domain/dmarc-record.js';
import { applyCheck, type SendingDomain } from '../../src/domain/sending-domain.js';
import { organizationalDomain } from '../../src/domains/organizational-domain.js';

describe('the Organizational Domain (RFC 7489 3.2, Public Suffix List)', () => {
  it.each([
    ['mail.shop.co.uk', 'shop.co.uk'],
    ['shop.co.uk', 'shop.co.uk'],
    ['a.b.news.shop-mail.net', 'shop-mail.net'],
    ['bulk.xn--80ak6aa92e.com', 'xn--80ak6aa92e.com'],
    ['newsletter.city.kawasaki.jp', 'city.kawasaki.jp'], // a PSL exception rule (!city.kawasaki.jp)
    ['mail.team.github.io', 'team.github.io'], // the private section counts too
  ])('of %s is %s', (name, org) => {
    expect(organizationalDomain(name)).toBe(org);
  });

  it('is none for a bare public suffix', () => {
    expect(organizationalDomain('co.uk')).toBeUndefined();
    expect(organizationalDomain('github.io')).toBeUndefined();
  });
});

describe('a DMARC record inherited from the Organizational Domain', () => {
  const domain = 'mail.shop.co.uk';
  const own = dmarcRecord(domain, '');

  it('is told by its host: the organization\'s _dmarc, not the domain\'s own', () => {
    expect(dmarcInheritedFrom(domain, { host: '_dmarc.shop.co.uk' })).toBe('shop.co.uk');
    expect(dmarcInheritedFrom(domain, own)).toBeUndefined();
  });

  it('keeps one history with the domain\'s own record: verified while inherited, failing once gone', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const verified = { type: 'txt' as const, host: 'h', value: 'v', status: 'verified' as const, lastCheckedAt: at };
    const d: SendingDomain = {
      id: 'd', accountId: 'a', name: domain, createdAt: at, updatedAt: at, verified: true, channelIds: [], deletedChannelIds: [],
      activeKey: { selector: 's', algorithm: 'rsa', createdAt: at, record: verified }, pendingKey: null, retiredKeys: [],
      returnPath: [{ ...verified, type: 'mx', value: '10 mx.host' }],
    };
    const run = (x: SendingDomain, host: string, value: string, outcome: 'match' | 'mismatch') =>
      applyCheck(x, { keys: { s: 'match' }, returnPath: [{ record: { type: 'mx', host: 'h', value: '10 mx.host' }, outcome: 'match' }], dmarc: { record: { ...own, host, value }, outcome } }, at).domain;
    const inherited = run(d, '_dmarc.shop.co.uk', 'v=DMARC1; p=reject', 'match');
    expect(inherited.dmarc).toMatchObject({ host: '_dmarc.shop.co.uk', value: 'v=DMARC1; p=reject', status: 'verified' });
    expect(run(inherited, own.host, own.value, 'mismatch').dmarc).toMatchObject({ host: own.host, value: own.value, status: 'failing' });
  });
});
