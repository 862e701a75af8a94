/**
 * MTA-STS policies (RFC 8461) fetched from a real HTTPS server on loopback, with a certificate
 * from a test CA, through a real DNS server (dns2) serving the _mta-sts TXT record and the
 * address of mta-sts.<domain>; cached in a real store.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DnsResolver } from '../../src/dns/resolver.js';
import { createLogger } from '../../src/log/logger.js';
import { FETCH_RETRY_MS, MtaStsPolicies, STORED_MEMO_MS, type ActiveStsPolicy, type MtaStsConfig, type MtaStsPoliciesOptions } from '../../src/mta-sts/cache.js';
import { openTestStore, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { startPolicyServer, type PolicyServer } from '../support/mta-sts-server.js';

let dns: TestDns;
let resolver: DnsResolver;
let server: PolicyServer;
let t: TestStore;
let policies: MtaStsPolicies | undefined;
const clock = { ms: 1_800_000_000_000 };
let logLines: string[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  // Uncached, so a TXT record the test changes is seen at the next lookup.
  resolver = testResolver(dns);
  server = await startPolicyServer();
});

afterAll(async () => {
  resolver.stop();
  await dns.close();
  await server.close();
});

afterEach(async () => {
  await policies?.stop();
  policies = undefined;
  await t?.close();
  dns.clear();
  server.requests.clear();
  logLines = [];
});

async function start(o: { config?: Partial<MtaStsConfig>; allowPrivate?: boolean; reuseStore?: boolean; resolver?: MtaStsPoliciesOptions['resolver'] } = {}): Promise<MtaStsPolicies> {
  if (!o.reuseStore) t = await openTestStore();
  const logger = createLogger({ level: 'info', destination: { write: (s: string) => void logLines.push(s) } });
  const config = { enabled: true, caFile: server.caFile, httpsPort: server.port, ...o.config };
  policies = new MtaStsPolicies({ store: t.store, resolver: o.resolver ?? resolver, config, allowPrivate: o.allowPrivate ?? true, logger, fetchTimeoutMs: 3000, now: () => clock.ms });
  await policies.start();
  return policies;
}

/** A domain publishing a policy: TXT with `id`, mta-sts.<domain> at 127.0.0.1, the policy text. */
function publish(domain: string, id: string, policy: string, cert?: 'valid' | 'self-signed' | 'wrong-name'): void {
  dns.set(`_mta-sts.${domain}`, 'TXT', ['v=spf1 -all', `v=STSv1; id=${id};`]);
  dns.set(`mta-sts.${domain}`, 'A', ['127.0.0.1']);
  server.answer(`mta-sts.${domain}`, policy, cert);
}

function policyText(mode: string, mx: string[], maxAge = 86400): string {
  return ['version: STSv1', `mode: ${mode}`, ...mx.map((m) => `mx: ${m}`), `max_age: ${maxAge}`, ''].join('\r\n');
}

/** The policy in force, as delivery routes under it (MtaStsPolicies.lookup). */
async function policyOf(p: MtaStsPolicies, domain: string): Promise<ActiveStsPolicy | null> {
  return (await p.lookup(domain)).policy;
}

function warnings(): string[] {
  return logLines.map((l) => JSON.parse(l) as { level: number; msg: string; error?: string }).filter((l) => l.level >= 40).map((l) => `${l.msg}: ${l.error ?? ''}`);
}

describe('MTA-STS policies', () => {
  it('fetches an enforce policy once and answers from the cache while the TXT id stays the same', async () => {
    const p = await start();
    publish('shop-mail.net', 'v1', policyText('enforce', ['mail.shop-mail.net', '*.backup-mx.org']));

    const policy = await policyOf(p, 'Shop-Mail.NET.');
    expect(policy).toEqual({ mode: 'enforce', mx: ['mail.shop-mail.net', '*.backup-mx.org'], id: 'v1', maxAge: 86400 });
    expect(p.mxAllowed(policy!, 'mx7.backup-mx.org')).toBe(true);
    expect(p.mxAllowed(policy!, 'mail.attacker-mx.com')).toBe(false);
    expect(await policyOf(p, 'shop-mail.net')).toEqual(policy);
    expect(server.requests.get('mta-sts.shop-mail.net')).toBe(1);
  });

  it('parses the _mta-sts TXT answer once per DNS answer, not again for every lookup (issue 29)', async () => {
    // The delivery resolver caches answers; every attempt looks the policy up.
    const cached = testResolver(dns, { cache: true });
    const parsed: string[] = [];
    const counting: MtaStsPoliciesOptions['resolver'] = {
      a: (name) => cached.a(name),
      aaaa: (name) => cached.aaaa(name),
      txtParsed: (name, kind, parse) => cached.txtParsed(name, kind, (records) => (parsed.push(name), parse(records))),
    };
    try {
      const p = await start({ resolver: counting });
      publish('busy-mail.net', 'b1', policyText('enforce', ['mx.busy-mail.net']));
      for (let attempt = 0; attempt < 5; attempt++) expect((await policyOf(p, 'busy-mail.net'))?.id).toBe('b1');
      expect(parsed).toEqual(['_mta-sts.busy-mail.net']);
      expect(dns.queries.filter((q) => q.name === '_mta-sts.busy-mail.net')).toHaveLength(1);
    } finally {
      cached.stop();
    }
  });

  it("reads a domain's stored policy once per STORED_MEMO_MS, and then the one another node stored meanwhile", async () => {
    const p = await start();
    publish('memo-mail.net', 'm1', policyText('enforce', ['mx.memo-mail.net']));
    let reads = 0;
    const get = t.store.mtaSts.get.bind(t.store.mtaSts);
    t.store.mtaSts.get = (domain) => (reads++, get(domain));
    for (let attempt = 0; attempt < 5; attempt++) expect((await policyOf(p, 'memo-mail.net'))?.id).toBe('m1');
    expect(reads).toBe(1);
    // Another node fetched and stored the domain's next policy; the TXT record names it.
    publish('memo-mail.net', 'm2', policyText('testing', ['mx.memo-mail.net']));
    await t.store.mtaSts.save('memo-mail.net', { id: 'm2', policy: { mode: 'testing', mx: ['mx.memo-mail.net'], maxAge: 86400 }, fetchedAtMs: clock.ms, expiresAtMs: clock.ms + 86_400_000 });
    clock.ms += STORED_MEMO_MS;
    expect(await policyOf(p, 'memo-mail.net')).toMatchObject({ id: 'm2', mode: 'testing' });
    expect(reads).toBe(2);
    expect(server.requests.get('mta-sts.memo-mail.net')).toBe(1);
  });

  it('has no policy when the _mta-sts record holds a field of 60,000 spaces, and fetches none (RFC 8461 3.1)', async () => {
    // dns2 takes a while to write a 60 KB answer on a busy machine: more than testResolver's 500 ms.
    const patient = new DnsResolver({ servers: [dns.address], timeoutMs: 10_000, tries: 1, cacheMaxEntries: 0 });
    patient.start();
    try {
      const p = await start({ resolver: patient });
      publish('spacious-mail.net', 's1', policyText('enforce', ['mx.spacious-mail.net']));
      // Joined from 236 character-strings of at most 255 bytes (RFC 1035 3.3.14), over TCP.
      dns.set('_mta-sts.spacious-mail.net', 'TXT', [`v=STSv1; id=s1; a${' '.repeat(60_000)}b;`]);
      const txt = await patient.txt('_mta-sts.spacious-mail.net');
      expect(txt.status === 'ok' && txt.records[0].length).toBe(60_019);
      expect(await p.lookup('spacious-mail.net')).toEqual({ policy: null });
      expect(server.requests.get('mta-sts.spacious-mail.net')).toBeUndefined();
    } finally {
      patient.stop();
    }
  });

  it('shares one fetch between concurrent lookups of a domain', async () => {
    const p = await start();
    publish('crowded-mail.net', 'c1', policyText('testing', ['mx.crowded-mail.net']));
    const all = await Promise.all([1, 2, 3, 4].map(() => policyOf(p, 'crowded-mail.net')));
    expect(all.map((x) => x?.mode)).toEqual(['testing', 'testing', 'testing', 'testing']);
    expect(server.requests.get('mta-sts.crowded-mail.net')).toBe(1);
  });

  it('fetches the policy anew when the TXT id changes', async () => {
    const p = await start();
    publish('rotating-mail.net', 'one', policyText('testing', ['mx1.rotating-mail.net']));
    expect((await policyOf(p, 'rotating-mail.net'))?.mode).toBe('testing');

    publish('rotating-mail.net', 'two', policyText('enforce', ['mx2.rotating-mail.net']));
    expect(await policyOf(p, 'rotating-mail.net')).toEqual({ mode: 'enforce', mx: ['mx2.rotating-mail.net'], id: 'two', maxAge: 86400 });
    expect(server.requests.get('mta-sts.rotating-mail.net')).toBe(2);
  });

  it('keeps a cached policy when the TXT record goes away, until its max_age ends', async () => {
    const p = await start();
    publish('vanishing-mail.net', 'v1', policyText('enforce', ['mx.vanishing-mail.net'], 3600));
    expect((await policyOf(p, 'vanishing-mail.net'))?.mode).toBe('enforce');

    dns.remove('_mta-sts.vanishing-mail.net');
    expect((await policyOf(p, 'vanishing-mail.net'))?.id).toBe('v1');
    clock.ms += 3601 * 1000;
    expect(await policyOf(p, 'vanishing-mail.net')).toBeNull();
  });

  it('keeps the cached policy when fetching the new id fails, and tries that id again only after a pause', async () => {
    const p = await start();
    publish('flaky-mail.net', 'good', policyText('enforce', ['mx.flaky-mail.net']));
    expect((await policyOf(p, 'flaky-mail.net'))?.id).toBe('good');

    dns.set('_mta-sts.flaky-mail.net', 'TXT', ['v=STSv1; id=next']);
    server.answer('mta-sts.flaky-mail.net', { status: 500, body: 'oops' });
    expect(await p.lookup('flaky-mail.net')).toMatchObject({ policy: { id: 'good' }, fetchFailure: { kind: 'fetch', id: 'next' } });
    expect(warnings().join('\n')).toMatch(/could not be fetched.*HTTP 500/);
    expect((await policyOf(p, 'flaky-mail.net'))?.id).toBe('good');
    expect(server.requests.get('mta-sts.flaky-mail.net')).toBe(2);

    server.answer('mta-sts.flaky-mail.net', policyText('testing', ['mx.flaky-mail.net']));
    clock.ms += FETCH_RETRY_MS + 1;
    expect(await policyOf(p, 'flaky-mail.net')).toEqual({ mode: 'testing', mx: ['mx.flaky-mail.net'], id: 'next', maxAge: 86400 });
  });

  it('still knows a policy after the store and the component restart, without fetching it again', async () => {
    await start();
    publish('durable-mail.net', 'd1', policyText('enforce', ['mx.durable-mail.net']));
    expect((await policyOf(policies!, 'durable-mail.net'))?.id).toBe('d1');
    await policies!.stop();
    await t.reopen();

    // The policy host is now down and the TXT record gone: only the stored policy remains.
    server.answer('mta-sts.durable-mail.net', { status: 503 });
    dns.remove('_mta-sts.durable-mail.net');
    const p = await start({ reuseStore: true });
    expect(await policyOf(p, 'durable-mail.net')).toEqual({ mode: 'enforce', mx: ['mx.durable-mail.net'], id: 'd1', maxAge: 86400 });
    expect(server.requests.get('mta-sts.durable-mail.net')).toBe(1);
  });

  it.each([
    ['self-signed', /certificate of mta-sts\.selfsigned-mail\.net is not valid/],
    ['wrong-name', /certificate of mta-sts\.selfsigned-mail\.net is not valid.*ERR_TLS_CERT_ALTNAME_INVALID/],
  ] as const)('has no policy when the policy host presents a %s certificate, and logs why', async (cert, why) => {
    const p = await start();
    publish('selfsigned-mail.net', 's1', policyText('enforce', ['mx.selfsigned-mail.net']), cert);
    expect(await policyOf(p, 'selfsigned-mail.net')).toBeNull();
    expect(warnings().join('\n')).toMatch(why);
  });

  it('does not trust the test CA without caFile', async () => {
    const p = await start({ config: { caFile: '' } });
    publish('private-ca-mail.net', 'p1', policyText('enforce', ['mx.private-ca-mail.net']));
    expect(await policyOf(p, 'private-ca-mail.net')).toBeNull();
    expect(warnings().join('\n')).toMatch(/certificate of mta-sts\.private-ca-mail\.net is not valid/);
  });

  it('does not follow a redirect', async () => {
    const p = await start();
    publish('moved-mail.net', 'm1', '');
    publish('target-mail.net', 't1', policyText('enforce', ['mx.target-mail.net']));
    server.answer('mta-sts.moved-mail.net', { status: 301, headers: { location: `https://mta-sts.target-mail.net:${server.port}/.well-known/mta-sts.txt` } });
    expect(await policyOf(p, 'moved-mail.net')).toBeNull();
    expect(warnings().join('\n')).toMatch(/answered 301, a redirect, which is not followed/);
    expect(server.requests.get('mta-sts.target-mail.net')).toBeUndefined();
  });

  it('refuses a body over 64 KiB, with or without Content-Length', async () => {
    const p = await start();
    const big = policyText('enforce', ['mx.big-mail.net']) + `x_pad: ${'a'.repeat(70 * 1024)}\r\n`;
    publish('big-mail.net', 'b1', big);
    expect(await policyOf(p, 'big-mail.net')).toBeNull();
    publish('chunked-mail.net', 'c1', '');
    server.answer('mta-sts.chunked-mail.net', { body: Buffer.from(big), headers: { 'transfer-encoding': 'chunked' } });
    expect(await policyOf(p, 'chunked-mail.net')).toBeNull();
    expect(warnings().join('\n').match(/larger than 65536 bytes/g)).toHaveLength(2);
  });

  it('refuses a policy served as another media type, or that does not parse', async () => {
    const p = await start();
    publish('html-mail.net', 'h1', '');
    server.answer('mta-sts.html-mail.net', { headers: { 'content-type': 'text/html' }, body: policyText('enforce', ['mx.html-mail.net']) });
    expect(await policyOf(p, 'html-mail.net')).toBeNull();
    publish('garbled-mail.net', 'g1', 'version: STSv1\nmode: enforce\nmax_age: 60\n');
    expect(await policyOf(p, 'garbled-mail.net')).toBeNull();
    expect(warnings().join('\n')).toMatch(/media type is "text\/html"[\s\S]*enforce policy without mx/);
  });

  it('says why an announced policy is missing: fetch error, invalid policy, or a certificate that does not verify (RFC 8460 4.3.2.2)', async () => {
    const p = await start();
    publish('down-mail.net', 'd1', '');
    server.answer('mta-sts.down-mail.net', { status: 500 });
    publish('junk-mail.net', 'j1', 'this is not a policy\n');
    publish('untrusted-mail.net', 'u1', policyText('enforce', ['mx.untrusted-mail.net']), 'self-signed');
    expect(await p.lookup('down-mail.net')).toEqual({ policy: null, fetchFailure: { kind: 'fetch', id: 'd1', reason: expect.stringMatching(/answered HTTP 500/) } });
    expect(await p.lookup('junk-mail.net')).toEqual({ policy: null, fetchFailure: { kind: 'invalid', id: 'j1', reason: expect.stringMatching(/not "key: value"/) } });
    expect(await p.lookup('untrusted-mail.net')).toEqual({ policy: null, fetchFailure: { kind: 'webpki', id: 'u1', reason: expect.stringMatching(/certificate of mta-sts\.untrusted-mail\.net is not valid/) } });

    // Within FETCH_RETRY_MS the same failure is answered without a new request.
    expect((await p.lookup('down-mail.net')).fetchFailure?.kind).toBe('fetch');
    expect(server.requests.get('mta-sts.down-mail.net')).toBe(1);
  });

  it('names no failure when the policy is had, or when the domain announces none', async () => {
    const p = await start();
    publish('fine-mail.net', 'f1', policyText('testing', ['mx.fine-mail.net']));
    expect(await p.lookup('fine-mail.net')).toEqual({ policy: { mode: 'testing', mx: ['mx.fine-mail.net'], id: 'f1', maxAge: 86400 } });
    expect(await p.lookup('fine-mail.net')).toEqual({ policy: expect.objectContaining({ id: 'f1' }) });
    expect(await p.lookup('silent-mail.net')).toEqual({ policy: null });
  });

  it('has no policy without a TXT record, and fetches nothing', async () => {
    const p = await start();
    dns.set('plain-mail.net', 'MX', ['10 mx.plain-mail.net']);
    server.answer('mta-sts.plain-mail.net', policyText('enforce', ['mx.plain-mail.net']));
    expect(await policyOf(p, 'plain-mail.net')).toBeNull();
    expect(server.requests.size).toBe(0);
  });

  it('refuses a policy host on a loopback address unless delivery.allowPrivate', async () => {
    const p = await start({ allowPrivate: false });
    publish('loopback-mail.net', 'l1', policyText('enforce', ['mx.loopback-mail.net']));
    expect(await policyOf(p, 'loopback-mail.net')).toBeNull();
    expect(warnings().join('\n')).toMatch(/non-public addresses/);
    expect(server.requests.size).toBe(0);
  });

  it('looks nothing up when delivery.mtaSts.enabled is false', async () => {
    const p = await start({ config: { enabled: false } });
    publish('disabled-mail.net', 'x1', policyText('enforce', ['mx.disabled-mail.net']));
    dns.queries.length = 0;
    expect(await policyOf(p, 'disabled-mail.net')).toBeNull();
    expect(dns.queries).toHaveLength(0);
  });
});
