import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { SiteLimitTable } from '../../src/delivery/site-limits.js';
import { siteName } from '../../src/delivery/sites.js';
import { PROVIDER_LIMITS } from '../../src/domain/site-limits.js';

const google = PROVIDER_LIMITS.find((p) => p.id === 'google')!;
const microsoft = PROVIDER_LIMITS.find((p) => p.id === 'microsoft')!;

describe('siteName', () => {
  it('is the sorted set of MX host names, lowercase, without the root dot', () => {
    expect(siteName(['MX2.Example.test.', 'mx1.example.test', 'mx2.example.test'])).toBe('mx1.example.test,mx2.example.test');
  });

  it('does not depend on the order or the preferences of the records', () => {
    expect(siteName(['b.test', 'a.test'])).toBe(siteName(['a.test', 'b.test']));
  });
});

describe('SiteLimitTable', () => {
  const table = new SiteLimitTable(3);

  it('applies a provider entry by MX host suffix', () => {
    const gmail = siteName(['gmail-smtp-in.l.google.com', 'alt1.gmail-smtp-in.l.google.com', 'alt2.gmail-smtp-in.l.google.com']);
    expect(table.siteLimits(gmail)).toEqual({ concurrency: google.concurrency, maxMessagesPerConnection: google.maxMessagesPerConnection });
    expect(table.siteLimits('contoso-com.mail.protection.outlook.com').concurrency).toBe(microsoft.concurrency);
    expect(table.siteLimits('alt4.aspmx.l.googlemail.com').concurrency).toBe(google.concurrency);
  });

  it('matches on a label boundary only', () => {
    expect(table.siteLimits('mx.notgoogle.com')).toEqual({ concurrency: 3 });
  });

  it('gives a site no entry names the default concurrency and no per-connection limit', () => {
    expect(table.siteLimits('mx1.example.test,mx2.example.test')).toEqual({ concurrency: 3 });
  });

  it('lets a config override win over the table, keeping the fields it leaves out', () => {
    const t = new SiteLimitTable(3, { '*.Google.com': { concurrency: 1 }, 'example.test': { concurrency: 7, maxMessagesPerConnection: 5 } });
    expect(t.siteLimits('aspmx.l.google.com')).toEqual({ concurrency: 1, maxMessagesPerConnection: google.maxMessagesPerConnection });
    expect(t.siteLimits('mx.example.test')).toEqual({ concurrency: 7, maxMessagesPerConnection: 5 });
  });

  it('prefers the longest matching suffix', () => {
    const t = new SiteLimitTable(3, { 'test': { concurrency: 2 }, 'big.test': { concurrency: 9 } });
    expect(t.siteLimits('mx.big.test').concurrency).toBe(9);
    expect(t.siteLimits('mx.small.test').concurrency).toBe(2);
  });
});

describe('delivery.sites in the configuration', () => {
  it('reads an object keyed by MX suffix, from the overrides and from the environment', () => {
    const c = loadConfig({ env: {}, overrides: { 'delivery.sites': { 'google.com': { concurrency: 4 } } } });
    expect(c.delivery.sites).toEqual({ 'google.com': { concurrency: 4 } });
    const e = loadConfig({ env: { POSTRIDER_DELIVERY_SITES: '{"yahoodns.net": {"maxMessagesPerConnection": 10}}' } });
    expect(e.delivery.sites).toEqual({ 'yahoodns.net': { maxMessagesPerConnection: 10 } });
  });

  it('defaults to no overrides', () => {
    expect(loadConfig({ env: {} }).delivery.sites).toEqual({});
  });

  it('refuses unknown limits, bad numbers and bad suffixes', () => {
    for (const bad of [{ 'google.com': { connections: 4 } }, { 'google.com': { concurrency: 0 } }, { 'not a host': { concurrency: 2 } }, 'x']) {
      expect(() => loadConfig({ env: {}, overrides: { 'delivery.sites': bad } }), JSON.stringify(bad)).toThrow(/delivery\.sites/);
    }
  });
});
