/** MX resolution against the in-process test DNS server (never real DNS). */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../src/delivery/address-policy.js';
import { MxResolver } from '../../src/delivery/mx.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';

let dns: TestDns;
let resolver: DnsResolver;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns);
});

afterAll(async () => {
  resolver.stop();
  await dns.close();
});

afterEach(() => dns.clear());

function mx(opts: { allowPrivate?: boolean; random?: () => number } = {}) {
  return new MxResolver(resolver, new AddressPolicy({ allowPrivate: opts.allowPrivate ?? true }), opts.random);
}

describe('MxResolver', () => {
  it('orders hosts by MX preference and resolves each to its addresses', async () => {
    dns.set('northwind-mail.net', 'MX', ['20 backup.northwind-mail.net', '10 primary.northwind-mail.net']);
    dns.set('primary.northwind-mail.net', 'A', ['127.0.3.1']);
    dns.set('primary.northwind-mail.net', 'AAAA', ['::1']);
    dns.set('backup.northwind-mail.net', 'A', ['127.0.3.2']);
    const r = await mx().resolve('northwind-mail.net');
    expect(r).toEqual({
      status: 'ok',
      implicit: false,
      refused: [],
      hosts: [
        { host: 'primary.northwind-mail.net', priority: 10, addresses: ['127.0.3.1', '::1'] },
        { host: 'backup.northwind-mail.net', priority: 20, addresses: ['127.0.3.2'] },
      ],
    });
  });

  it('picks a random order among hosts of equal preference (RFC 5321 5.1)', async () => {
    dns.set('equal-mail.net', 'MX', ['10 a.equal-mail.net', '10 b.equal-mail.net']);
    dns.set('a.equal-mail.net', 'A', ['127.0.3.1']);
    dns.set('b.equal-mail.net', 'A', ['127.0.3.2']);
    const firsts = new Set<string>();
    for (const seq of [[0.1, 0.9], [0.9, 0.1]]) {
      let i = 0;
      const r = await mx({ random: () => seq[i++ % 2] }).resolve('equal-mail.net');
      if (r.status === 'ok') firsts.add(r.hosts[0].host);
    }
    expect(firsts).toEqual(new Set(['a.equal-mail.net', 'b.equal-mail.net']));
  });

  it("falls back to the domain's own A record when it has no MX (implicit MX)", async () => {
    dns.set('implicit-mail.net', 'A', ['127.0.3.5']);
    expect(await mx().resolve('implicit-mail.net')).toEqual({
      status: 'ok',
      implicit: true,
      refused: [],
      hosts: [{ host: 'implicit-mail.net', priority: 0, addresses: ['127.0.3.5'] }],
    });
  });

  it('fails permanently for a null MX (RFC 7505) with 556 5.1.10', async () => {
    dns.set('nullmx-mail.net', 'MX', ['0 .']);
    expect(await mx().resolve('nullmx-mail.net')).toMatchObject({ status: 'failed', reply: { code: 556, enhancedCode: '5.1.10' } });
  });

  it('fails permanently for a domain that does not exist (5.1.2)', async () => {
    expect(await mx().resolve('nowhere-mail.net')).toMatchObject({ status: 'failed', reply: { enhancedCode: '5.1.2' } });
  });

  it('fails temporarily when the name server fails (4.4.3)', async () => {
    dns.servfail('broken-mail.net');
    expect(await mx().resolve('broken-mail.net')).toMatchObject({ status: 'failed', reply: { enhancedCode: '4.4.3' } });
  });

  it('skips an MX host that does not resolve and keeps the others', async () => {
    dns.set('partial-mail.net', 'MX', ['10 gone.partial-mail.net', '20 ok.partial-mail.net']);
    dns.set('ok.partial-mail.net', 'A', ['127.0.3.9']);
    const r = await mx().resolve('partial-mail.net');
    expect(r.status === 'ok' && r.hosts.map((h) => h.host)).toEqual(['ok.partial-mail.net']);
  });

  it('refuses loopback and private MX addresses when private delivery is not allowed', async () => {
    dns.set('internal-mail.net', 'MX', ['10 mx.internal-mail.net']);
    dns.set('mx.internal-mail.net', 'A', ['127.0.0.1', '10.0.0.5']);
    expect(await mx({ allowPrivate: false }).resolve('internal-mail.net')).toMatchObject({ status: 'failed', reply: { enhancedCode: '5.4.4' } });
  });
});
