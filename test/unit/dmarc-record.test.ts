import { describe, expect, it } from 'vitest';
import { dmarcRecord, dmarcWarnings, isDmarcRecord, publishedDmarc } from '../../src/domain/dmarc-record.js';
import { applyCheck, type DnsRecordState, type SendingDomain } from '../../src/domain/sending-domain.js';

const AT = '2026-01-01T00:00:00.000Z';
const EARLIER = '2025-12-01T00:00:00.000Z';
const recommended = dmarcRecord('acme.com', '');

function domain(dmarc?: DnsRecordState): SendingDomain {
  const verified: DnsRecordState = { type: 'txt', host: 'h', value: 'v', status: 'verified', lastCheckedAt: EARLIER };
  return {
    id: 'd',
    accountId: 'a',
    name: 'acme.com',
    createdAt: EARLIER,
    updatedAt: EARLIER,
    verified: true,
    channelIds: [],
    deletedChannelIds: [],
    activeKey: { selector: 's', algorithm: 'rsa', createdAt: EARLIER, record: verified },
    pendingKey: null,
    retiredKeys: [],
    returnPath: [{ ...verified, type: 'mx', value: '10 mx.host' }],
    ...(dmarc ? { dmarc } : {}),
  };
}

const check = (d: SendingDomain, value: string, outcome: 'match' | 'mismatch' | 'error') =>
  applyCheck(d, { keys: { s: 'match' }, returnPath: [{ record: { type: 'mx', host: 'h', value: '10 mx.host' }, outcome: 'match' }], dmarc: { record: { ...recommended, value }, outcome } }, AT).domain;

describe('the recommended DMARC record', () => {
  it('is p=none at _dmarc.<domain>, with rua only when a report address is configured', () => {
    expect(recommended).toEqual({ type: 'txt', host: '_dmarc.acme.com', value: 'v=DMARC1; p=none' });
    expect(dmarcRecord('acme.com', ' dmarc@reports.example.net ').value).toBe('v=DMARC1; p=none; rua=mailto:dmarc@reports.example.net');
  });

  it('suggests a report address only while none is configured and the domain has no DMARC record of its own', () => {
    expect(dmarcWarnings({ status: 'failed' }, '').map((w) => w.code)).toEqual(['dmarc_report_address_unset']);
    expect(dmarcWarnings({ status: 'verified' }, '')).toEqual([]);
    expect(dmarcWarnings({ status: 'pending' }, 'x@y.net')).toEqual([]);
  });
});

describe('reading the TXT records at _dmarc', () => {
  it.each([
    ['v=DMARC1; p=none', true],
    ['v=DMARC1;p=reject', true],
    ['V = DMARC1 ; p=none', true],
    ['v=DMARC1', true],
    ['v=dmarc1; p=none', false],
    ['v=DMARC10; p=none', false],
    ['p=none; v=DMARC1', false],
    ['v=spf1 -all', false],
  ] as const)('%s is a DMARC record: %s', (txt, expected) => {
    expect(isDmarcRecord(txt)).toBe(expected);
  });

  it('takes the one DMARC record among others, and none of two', () => {
    expect(publishedDmarc(['site-verification=1', ' v=DMARC1; p=none '])).toBe('v=DMARC1; p=none');
    expect(publishedDmarc(['v=DMARC1; p=none', 'v=DMARC1; p=reject'])).toBeUndefined();
    expect(publishedDmarc([])).toBeUndefined();
  });
});

describe('applying a check to the DMARC record', () => {
  it('never changes whether the domain is verified', () => {
    expect(check(domain(), recommended.value, 'mismatch')).toMatchObject({ verified: true, dmarc: { status: 'failed', lastCheckedAt: AT } });
  });

  it('shows the published value while verified, and goes failing with the recommended value when it disappears', () => {
    const own = 'v=DMARC1; p=reject';
    const found = check(domain(), own, 'match');
    expect(found.dmarc).toEqual({ ...recommended, value: own, status: 'verified', lastCheckedAt: AT });
    expect(check(found, recommended.value, 'mismatch').dmarc).toMatchObject({ value: recommended.value, status: 'failing' });
  });

  it('keeps the record as it was on a temporary error, and starts a new domain pending', () => {
    const before: DnsRecordState = { ...recommended, value: 'v=DMARC1; p=reject', status: 'verified', lastCheckedAt: EARLIER };
    expect(check(domain(before), recommended.value, 'error').dmarc).toBe(before);
    expect(check(domain(), recommended.value, 'error').dmarc).toEqual({ ...recommended, status: 'pending', lastCheckedAt: null });
  });
});
