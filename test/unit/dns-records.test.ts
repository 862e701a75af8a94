import { describe, expect, it } from 'vitest';
import { dkimRecordMatches, makeSelector, parseTagList } from '../../src/domain/dkim-record.js';
import { mxPointsTo, returnPathRecords, spfAuthorizes } from '../../src/domain/return-path.js';

const KEY = 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA';

describe('DKIM records', () => {
  it('parses a tag-list, ignoring whitespace and a trailing semicolon, and refuses duplicate tags', () => {
    expect(parseTagList(' v = DKIM1 ;k=rsa;p=AB CD; ')).toEqual(new Map([['v', 'DKIM1'], ['k', 'rsa'], ['p', 'AB CD']]));
    expect(parseTagList('k=rsa; k=ed25519')).toBeNull();
    expect(parseTagList('garbage')).toBeNull();
  });

  it('matches the same key whatever the tag order, extra tags or folding of p=', () => {
    expect(dkimRecordMatches('p=MIIBIjANBgkqhkiG9w0B AQEFAAOCAQ8AMIIBCgKCAQEA; t=s', KEY)).toBe(true);
  });

  it('does not match another key, another key type, a revoked key or another version', () => {
    expect(dkimRecordMatches('v=DKIM1; k=rsa; p=OTHER', KEY)).toBe(false);
    expect(dkimRecordMatches(KEY.replace('k=rsa', 'k=ed25519'), KEY)).toBe(false);
    expect(dkimRecordMatches('v=DKIM1; k=rsa; p=', 'v=DKIM1; k=rsa; p=')).toBe(false);
    expect(dkimRecordMatches(KEY.replace('DKIM1', 'DKIM2'), KEY)).toBe(false);
  });

  it('names selectors pr + UTC year and month + the random part', () => {
    expect(makeSelector(new Date('2026-11-30T23:59:59Z'), 'a1b2')).toBe('pr202611a1b2');
  });
});

describe('return-path records', () => {
  it('asks for an MX and an SPF record at <label>.<domain>', () => {
    expect(returnPathRecords({ domain: 'acme.com', label: 'bounces', hostname: 'mx.host.net' })).toEqual([
      { type: 'mx', host: 'bounces.acme.com', value: '10 mx.host.net' },
      { type: 'txt', host: 'bounces.acme.com', value: 'v=spf1 a:mx.host.net ~all' },
    ]);
  });

  it('matches an MX naming our host in any case, with or without the root dot', () => {
    expect(mxPointsTo([{ exchange: 'other.net' }, { exchange: 'MX.Host.NET.' }], 'mx.host.net')).toBe(true);
    expect(mxPointsTo([{ exchange: 'mx.host.net.evil.com' }], 'mx.host.net')).toBe(false);
  });

  it.each([
    [['v=spf1 a:mx.host.net ~all'], true],
    [['V=SPF1 +a:MX.HOST.NET/24 -all'], true],
    [['v=spf1 mx -all'], true],
    [['other', 'v=spf1 ip4:192.0.2.1 a:mx.host.net -all'], true],
    [['v=spf1 a -all'], false],
    [['v=spf1 -a:mx.host.net ~all'], false],
    [['v=spf1 a:mx.host.net.evil.com ~all'], false],
    [['v=spf10 a:mx.host.net'], false],
    [['v=spf1 a:mx.host.net ~all', 'v=spf1 -all'], false],
    [[], false],
  ])('SPF %j authorizes our host: %s', (txt, expected) => {
    expect(spfAuthorizes(txt, 'mx.host.net')).toBe(expected);
  });
});
