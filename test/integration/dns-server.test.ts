/**
 * The test DNS server itself, checked on the wire with dns2's client (not node's resolver), so
 * the resolver tests can trust what it sends: real splitting, real rcodes, real root names.
 */
import dns2 from 'dns2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDns } from '../support/dns-server.js';

let server: TestDns;
let query: ReturnType<typeof dns2.TCPClient>;

beforeAll(async () => {
  server = await startDnsServer();
  query = dns2.TCPClient({ dns: '127.0.0.1', port: server.port });
});

afterAll(async () => {
  await server.close();
});

describe('test DNS server', () => {
  it('listens on a random loopback port for both UDP and TCP', async () => {
    expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    const udp = dns2.UDPClient({ dns: '127.0.0.1', port: server.port, timeout: 2_000 });
    server.set('both.test', 'A', ['192.0.2.1']);

    expect((await udp('both.test', 'A')).answers[0].address).toBe('192.0.2.1');
    expect((await query('both.test', 'A')).answers[0].address).toBe('192.0.2.1');
  });

  it('splits a TXT value longer than 255 bytes into several character-strings', async () => {
    const value = 'x'.repeat(600);
    server.set('long.test', 'TXT', [value]);

    const response = await query('long.test', 'TXT');

    expect(response.answers).toHaveLength(1);
    expect((response.answers[0].data as string[]).map((s) => s.length)).toEqual([255, 255, 90]);
    expect((response.answers[0].data as string[]).join('')).toBe(value);
  });

  it('answers NXDOMAIN for an unknown name and an empty NOERROR for a known name of another type', async () => {
    server.set('known.test', 'A', ['192.0.2.1']);

    const missing = await query('unknown.test', 'A');
    const nodata = await query('known.test', 'MX');

    expect(missing.header.rcode).toBe(3);
    expect(nodata.header.rcode).toBe(0);
    expect(nodata.answers).toEqual([]);
  });

  it('answers SERVFAIL for a name marked as failing', async () => {
    server.servfail('fail.test');

    expect((await query('fail.test', 'TXT')).header.rcode).toBe(2);
  });

  it('encodes a null MX exchange as the root name', async () => {
    server.set('nomail.test', 'MX', [{ exchange: '.', priority: 0 }]);

    const response = await query('nomail.test', 'MX');

    expect(response.answers).toHaveLength(1);
    expect(response.answers[0]).toMatchObject({ priority: 0, exchange: '' });
  });

  it('matches names case-insensitively and logs every query', async () => {
    server.queries.length = 0;
    server.set('Mixed.Case.TEST.', 'A', ['192.0.2.7']);

    const response = await query('mixed.CASE.test', 'A');

    expect(response.answers[0].address).toBe('192.0.2.7');
    expect(server.queries).toEqual([{ name: 'mixed.case.test', type: 'A' }]);
  });
});
