/**
 * DnsResolver against a real DNS server (dns2, in process, on loopback). Never real DNS: the
 * resolver is always given the test server's address explicitly.
 */
import dgram from 'node:dgram';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DnsResolver, MAX_ADDRESSES, MAX_MX_RECORDS, UNREPORTED_TTL_SECONDS, isNullMx, parseServers, type DnsResolverOptions } from '../../src/dns/resolver.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { waitFor } from '../support/wait.js';

let server: TestDns;
const resolvers: DnsResolver[] = [];

beforeAll(async () => {
  server = await startDnsServer();
});

afterAll(async () => {
  await server.close();
});

afterEach(() => {
  for (const r of resolvers.splice(0)) r.stop();
  server.clear();
  server.queries.length = 0;
});

/** A started resolver pointed at the test server (or `servers`), with a controllable clock. */
function makeResolver(opts: DnsResolverOptions = {}) {
  const clock = { ms: 1_700_000_000_000 };
  const resolver = new DnsResolver({ servers: [server.address], timeoutMs: 500, tries: 1, now: () => clock.ms, ...opts });
  resolver.start();
  resolvers.push(resolver);
  return { resolver, clock };
}

function queriesFor(name: string, type: string): number {
  return server.queries.filter((q) => q.name === name && q.type === type).length;
}

/** A UDP socket that receives queries and never answers. */
async function blackHole(): Promise<{ address: string; received: () => number; close: () => Promise<void> }> {
  const socket = dgram.createSocket('udp4');
  let received = 0;
  socket.on('message', () => received++);
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    received: () => received,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

describe('DnsResolver', () => {
  it('joins the 255-byte character-strings of one TXT record back into a single value', async () => {
    const dkim = 'v=DKIM1; k=rsa; p=' + 'A'.repeat(582); // 600 bytes: three character-strings
    server.set('sel._domainkey.example.test', 'TXT', [dkim]);
    const { resolver } = makeResolver();

    const answer = await resolver.txt('sel._domainkey.example.test');

    expect(answer).toEqual({ status: 'ok', records: [dkim], ttl: 300 });
  });

  it('fetches a TXT answer too big for a UDP datagram by retrying over TCP', async () => {
    const big = 'v=DKIM1; p=' + 'B'.repeat(2989); // larger than any EDNS buffer c-ares offers
    server.set('big.example.test', 'TXT', [big]);
    const { resolver } = makeResolver();

    expect(await resolver.txt('big.example.test')).toEqual({ status: 'ok', records: [big], ttl: 300 });
    // The truncated UDP answer and the TCP retry both reached the server.
    expect(queriesFor('big.example.test', 'TXT')).toBe(2);
  });

  it('decodes UTF-8 TXT text even when a character straddles two character-strings', async () => {
    const value = 'a'.repeat(254) + 'é' + 'ü'.repeat(10); // 'é' is split across bytes 255/256
    server.set('utf8.example.test', 'TXT', [value]);
    const { resolver } = makeResolver();

    expect(await resolver.txt('utf8.example.test')).toEqual({ status: 'ok', records: [value], ttl: 300 });
  });

  it('keeps separate TXT records as separate values', async () => {
    server.set('example.test', 'TXT', ['v=spf1 -all', 'site-verification=abc']);
    const { resolver } = makeResolver();

    const answer = await resolver.txt('example.test');

    expect(answer.status).toBe('ok');
    if (answer.status === 'ok') expect([...answer.records].sort()).toEqual(['site-verification=abc', 'v=spf1 -all']);
  });

  it('returns MX records sorted by priority whatever order the server sends', async () => {
    server.set('example.test', 'MX', [
      { exchange: 'mx30.example.test', priority: 30 },
      { exchange: 'MX10.Example.Test.', priority: 10 },
      '20 mx20.example.test',
    ]);
    const { resolver } = makeResolver();

    const answer = await resolver.mx('example.test');

    expect(answer).toEqual({
      status: 'ok',
      ttl: 300,
      records: [
        { exchange: 'mx10.example.test', priority: 10 },
        { exchange: 'mx20.example.test', priority: 20 },
        { exchange: 'mx30.example.test', priority: 30 },
      ],
    });
  });

  it('keeps the MAX_MX_RECORDS most preferred MX records and MAX_ADDRESSES addresses of an answer that holds more', async () => {
    // Over TCP, a domain can answer with as many records as fit in 64 KiB (RFC 1035 4.2.2).
    const mx = Array.from({ length: 120 }, (_, i) => ({ exchange: `mx${i}.crowd.example.test`, priority: 120 - i }));
    server.set('crowd.example.test', 'MX', mx);
    server.set('mx.crowd.example.test', 'A', Array.from({ length: 100 }, (_, i) => `192.0.2.${i}`));
    const { resolver } = makeResolver();

    const answer = await resolver.mx('crowd.example.test');
    expect(answer.status === 'ok' && answer.records.map((r) => r.priority)).toEqual(Array.from({ length: MAX_MX_RECORDS }, (_, i) => i + 1));
    const a = await resolver.a('mx.crowd.example.test');
    expect(a.status === 'ok' && a.records).toEqual(Array.from({ length: MAX_ADDRESSES }, (_, i) => `192.0.2.${i}`));
  });

  it('parses a null MX as an empty exchange and recognises it', async () => {
    server.set('nomail.test', 'MX', [{ exchange: '', priority: 0 }]);
    server.set('nomail2.test', 'MX', [{ exchange: '.', priority: 0 }]);
    const { resolver } = makeResolver();

    for (const name of ['nomail.test', 'nomail2.test']) {
      const answer = await resolver.mx(name);
      expect(answer).toEqual({ status: 'ok', ttl: 300, records: [{ exchange: '', priority: 0 }] });
      if (answer.status === 'ok') expect(isNullMx(answer.records)).toBe(true);
    }
    expect(isNullMx([{ exchange: 'mx.example.test', priority: 0 }])).toBe(false);
  });

  it('tells a missing name, a name without that record type and a failing server apart', async () => {
    server.set('exists.test', 'A', ['192.0.2.1']);
    server.servfail('broken.test');
    const { resolver } = makeResolver();

    expect(await resolver.mx('missing.test')).toEqual({ status: 'nxdomain' });
    expect(await resolver.mx('exists.test')).toEqual({ status: 'nodata' });
    expect(await resolver.mx('broken.test')).toEqual({ status: 'error', error: 'SERVFAIL' });
  });

  it('resolves A and AAAA with the TTL the server gave, and CNAME targets', async () => {
    server.set('host.example.test', 'A', ['192.0.2.10', '192.0.2.11'], 120);
    server.set('host.example.test', 'AAAA', ['2001:db8::10'], 90);
    server.set('www.example.test', 'CNAME', ['host.example.test.']);
    const { resolver } = makeResolver();

    expect(await resolver.a('host.example.test')).toEqual({ status: 'ok', records: ['192.0.2.10', '192.0.2.11'], ttl: 120 });
    expect(await resolver.aaaa('host.example.test')).toEqual({ status: 'ok', records: ['2001:db8::10'], ttl: 90 });
    expect(await resolver.cname('www.example.test')).toEqual({ status: 'ok', records: 'host.example.test', ttl: 300 });
    // An address lookup through the alias ends at the target's addresses.
    expect(await resolver.a('www.example.test')).toMatchObject({ status: 'ok', records: ['192.0.2.10', '192.0.2.11'] });
  });

  it('answers a repeated query from the cache without asking the server again', async () => {
    server.set('example.test', 'MX', ['10 mx.example.test']);
    const { resolver } = makeResolver();

    await resolver.mx('example.test');
    const sent = server.queries.length;
    const again = await resolver.mx('Example.TEST.'); // same name: case and root dot do not matter

    expect(again).toMatchObject({ status: 'ok', records: [{ exchange: 'mx.example.test', priority: 10 }] });
    expect(server.queries.length).toBe(sent);
    expect(queriesFor('example.test', 'MX')).toBe(1);
  });

  it('parses a TXT answer once and caches what the reading returned, until the TTL passes', async () => {
    server.set('_mta-sts.parsed.example.test', 'TXT', ['v=STSv1; id=one']);
    const { resolver, clock } = makeResolver();
    const seen: (readonly string[])[] = [];
    const firstRecord = (records: readonly string[]): string => {
      seen.push(records);
      return records[0];
    };

    const answers = await Promise.all([1, 2, 3].map(() => resolver.txtParsed('_mta-sts.parsed.example.test', 'first', firstRecord)));
    expect(answers).toEqual(Array(3).fill({ status: 'ok', records: 'v=STSv1; id=one', ttl: UNREPORTED_TTL_SECONDS }));
    expect(await resolver.txtParsed('_mta-sts.parsed.example.test', 'first', firstRecord)).toMatchObject({ records: 'v=STSv1; id=one' });
    expect(seen).toEqual([['v=STSv1; id=one']]);

    // Another reading of the same name is its own entry; a new answer after the TTL is parsed again.
    server.set('_mta-sts.parsed.example.test', 'TXT', ['v=STSv1; id=two']);
    expect(await resolver.txtParsed('_mta-sts.parsed.example.test', 'count', (r) => r.length)).toMatchObject({ records: 1 });
    clock.ms += UNREPORTED_TTL_SECONDS * 1000 + 1;
    expect(await resolver.txtParsed('_mta-sts.parsed.example.test', 'first', firstRecord)).toMatchObject({ records: 'v=STSv1; id=two' });
    expect(seen).toHaveLength(2);
    expect(queriesFor('_mta-sts.parsed.example.test', 'TXT')).toBe(3);
  });

  it('asks the server again once the TTL has passed on the injected clock', async () => {
    server.set('host.example.test', 'A', ['192.0.2.1'], 30);
    const { resolver, clock } = makeResolver();

    expect(await resolver.a('host.example.test')).toMatchObject({ records: ['192.0.2.1'], ttl: 30 });
    server.set('host.example.test', 'A', ['192.0.2.2'], 30);

    clock.ms += 29_000;
    expect(await resolver.a('host.example.test')).toEqual({ status: 'ok', records: ['192.0.2.1'], ttl: 1 });
    expect(queriesFor('host.example.test', 'A')).toBe(1);

    clock.ms += 1_000;
    expect(await resolver.a('host.example.test')).toEqual({ status: 'ok', records: ['192.0.2.2'], ttl: 30 });
    expect(queriesFor('host.example.test', 'A')).toBe(2);
  });

  it('keeps TTLs between 5 seconds and one hour', async () => {
    server.set('zero.test', 'A', ['192.0.2.1'], 0);
    server.set('long.test', 'A', ['192.0.2.2'], 86_400);
    const { resolver, clock } = makeResolver();

    expect(await resolver.a('zero.test')).toMatchObject({ ttl: 5 });
    expect(await resolver.a('long.test')).toMatchObject({ ttl: 3600 });
    clock.ms += 4_000;
    await resolver.a('zero.test');
    expect(queriesFor('zero.test', 'A')).toBe(1);
    clock.ms += 1_000;
    await resolver.a('zero.test');
    expect(queriesFor('zero.test', 'A')).toBe(2);
  });

  it('caches NXDOMAIN and NODATA for a minute but retries a failure on the next lookup', async () => {
    server.set('exists.test', 'A', ['192.0.2.1']);
    server.servfail('broken.test');
    const { resolver, clock } = makeResolver();

    await resolver.mx('missing.test');
    await resolver.mx('exists.test');
    await resolver.mx('broken.test');
    server.set('missing.test', 'MX', ['10 mx.example.test']);
    server.set('exists.test', 'MX', ['10 mx.example.test']);
    server.remove('broken.test');
    server.set('broken.test', 'MX', ['10 mx.example.test']);

    expect(await resolver.mx('missing.test')).toEqual({ status: 'nxdomain' });
    expect(await resolver.mx('exists.test')).toEqual({ status: 'nodata' });
    expect(await resolver.mx('broken.test')).toMatchObject({ status: 'ok' });
    expect(queriesFor('missing.test', 'MX')).toBe(1);
    expect(queriesFor('exists.test', 'MX')).toBe(1);

    clock.ms += 60_000;
    expect(await resolver.mx('missing.test')).toMatchObject({ status: 'ok' });
    expect(await resolver.mx('exists.test')).toMatchObject({ status: 'ok' });
  });

  it('sends one query for concurrent identical lookups', async () => {
    server.set('example.test', 'TXT', ['v=spf1 -all']);
    const { resolver } = makeResolver();

    const answers = await Promise.all([resolver.txt('example.test'), resolver.txt('EXAMPLE.test'), resolver.txt('example.test.')]);

    for (const answer of answers) expect(answer).toEqual({ status: 'ok', records: ['v=spf1 -all'], ttl: 300 });
    expect(queriesFor('example.test', 'TXT')).toBe(1);
  });

  it('gives each caller its own copy so mutating a result cannot change the cache', async () => {
    server.set('example.test', 'MX', ['10 mx.example.test']);
    const { resolver } = makeResolver();

    const first = await resolver.mx('example.test');
    if (first.status === 'ok') {
      first.records[0].exchange = 'evil.test';
      first.records.push({ exchange: 'more.test', priority: 1 });
    }

    expect(await resolver.mx('example.test')).toMatchObject({ records: [{ exchange: 'mx.example.test', priority: 10 }] });
  });

  it('evicts the oldest entry when the cache is full', async () => {
    for (const n of ['one', 'two', 'three']) server.set(`${n}.test`, 'A', ['192.0.2.1']);
    const { resolver } = makeResolver({ cacheMaxEntries: 2 });

    await resolver.a('one.test');
    await resolver.a('two.test');
    await resolver.a('three.test'); // pushes one.test out
    await resolver.a('three.test');
    await resolver.a('two.test');
    await resolver.a('one.test');

    expect(queriesFor('one.test', 'A')).toBe(2);
    expect(queriesFor('two.test', 'A')).toBe(1);
    expect(queriesFor('three.test', 'A')).toBe(1);
  });

  it('reports an error within the timeout when the server never answers', async () => {
    const hole = await blackHole();
    try {
      const { resolver } = makeResolver({ servers: [hole.address], timeoutMs: 200, tries: 1 });
      const started = Date.now();

      const answer = await resolver.mx('example.test');

      expect(answer).toEqual({ status: 'error', error: 'timeout' });
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(hole.received()).toBeGreaterThanOrEqual(1);
      // Failures are not cached: the next lookup asks again.
      await resolver.mx('example.test');
      expect(hole.received()).toBeGreaterThanOrEqual(2);
    } finally {
      await hole.close();
    }
  });

  it('reports an error when nothing listens on the server port', async () => {
    const hole = await blackHole();
    const address = hole.address;
    await hole.close(); // the port is now closed: the kernel answers with ICMP port unreachable
    const { resolver } = makeResolver({ servers: [address], timeoutMs: 200, tries: 1 });

    const answer = await resolver.a('example.test');

    expect(answer.status).toBe('error');
  });

  it('cancels in-flight queries when stopped', async () => {
    const hole = await blackHole();
    try {
      const { resolver } = makeResolver({ servers: [hole.address], timeoutMs: 5_000, tries: 1 });
      const started = Date.now();
      const pending = resolver.txt('example.test');
      // In flight: the query has reached the server, which will never answer it.
      await waitFor(() => hole.received() >= 1, { what: 'the query at the black hole' });

      resolver.stop();

      expect(await pending).toEqual({ status: 'error', error: 'cancelled' });
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(await resolver.txt('example.test')).toEqual({ status: 'error', error: 'cancelled: resolver stopped' });
    } finally {
      await hole.close();
    }
  });

  it('works again when started after a stop', async () => {
    server.set('example.test', 'A', ['192.0.2.1']);
    const { resolver } = makeResolver();
    resolver.stop();
    resolver.start();

    expect(await resolver.a('example.test')).toMatchObject({ status: 'ok', records: ['192.0.2.1'] });
  });

  it('refuses lookups before start()', async () => {
    const resolver = new DnsResolver({ servers: [server.address] });

    await expect(resolver.a('example.test')).rejects.toThrow(/start\(\)/);
  });

  it('rejects an invalid server list when constructed', () => {
    expect(() => new DnsResolver({ servers: ['dns.example.test'] })).toThrow(/dns\.example\.test/);
  });
});

describe('parseServers', () => {
  it('accepts IPv4 and IPv6 addresses with and without ports', () => {
    expect(parseServers(['127.0.0.1:5353', ' 192.0.2.53 ', '[::1]:5353', '::1', '[2001:db8::53]', '2001:db8::1'])).toEqual([
      '127.0.0.1:5353',
      '192.0.2.53',
      '[::1]:5353',
      '::1',
      '2001:db8::53',
      '2001:db8::1',
    ]);
  });

  it('skips blank entries so an empty setting means the system servers', () => {
    expect(parseServers([''])).toEqual([]);
    expect(parseServers(['127.0.0.1:53', ' ', ''])).toEqual(['127.0.0.1:53']);
    expect(parseServers(''.split(','))).toEqual([]);
  });

  it.each([
    ['dns.example.test'],
    ['dns.example.test:53'],
    ['127.0.0.1:'],
    ['127.0.0.1:0'],
    ['127.0.0.1:65536'],
    ['127.0.0.1:53x'],
    ['127.0.0.256'],
    ['[::1]:'],
    ['[::1'],
    ['[127.0.0.1]:53'],
    ['[::1]53'],
    ['2001:db8::zz'],
  ])('throws an error naming the bad entry %s', (entry) => {
    expect(() => parseServers(['127.0.0.1', entry])).toThrow(`"${entry}"`);
  });
});
