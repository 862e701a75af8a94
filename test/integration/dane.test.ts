/**
 * DANE end to end on loopback: TLSA lookups through a DNS server that sets AD for "signed"
 * zones, and verifyPeer on a live STARTTLS session with a real smtp-server presenting the
 * test leaf (and its CA).
 */
import type { TLSSocket } from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDaneLookup, tlsRequirement, verifyPeer, type DaneResult } from '../../src/dane/index.js';
import { DANE_MX, daneCerts, tlsaText } from '../support/dane-certs.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';

const certs = daneCerts();
let dns: TestDns;
const lookup = (validating = true) => createDaneLookup({ servers: [dns.address], timeoutMs: 2000, dnssecValidating: validating });

beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(async () => {
  await dns.close();
});
beforeEach(() => {
  dns.clear();
  dns.queries.length = 0;
  dns.signed('dane-mail.net');
  dns.set(DANE_MX, 'A', ['127.0.0.1']);
  dns.set(`_25._tcp.${DANE_MX}`, 'TLSA', [tlsaText(3, 1, 1, certs.leaf)]);
});

describe('TLSA lookup (RFC 7672 2.2)', () => {
  it('a validated TLSA RRset with a DANE-EE record: DANE applies, TLS authenticated', async () => {
    const result = await lookup().tlsaFor(DANE_MX);
    expect(result).toMatchObject({ kind: 'dane', tlsaBase: DANE_MX, names: [DANE_MX] });
    expect(result.kind === 'dane' && result.records[0]).toMatchObject({ usage: 3, selector: 1, matchingType: 1 });
    expect(tlsRequirement(result)).toBe('authenticate');
    expect(dns.queries).toEqual([
      { name: DANE_MX, type: 'A' },
      { name: `_25._tcp.${DANE_MX}`, type: 'TLSA' },
    ]);
  });

  it('a TLSA RRset too large for a datagram is asked again over TCP and read whole (RFC 7766)', async () => {
    const others = Array.from({ length: 60 }, (_, i) => `3 1 1 ${i.toString(16).padStart(2, '0').repeat(32)}`);
    dns.set(`_25._tcp.${DANE_MX}`, 'TLSA', [...others, tlsaText(3, 1, 1, certs.leaf)]);
    const result = await lookup().tlsaFor(DANE_MX);
    expect(result.kind === 'dane' && result.records).toHaveLength(61);
    // The truncated answer over UDP, then the same question over TCP.
    expect(dns.queries.filter((q) => q.type === 'TLSA')).toHaveLength(2);
  });

  it('answers without AD (unsigned zone): insecure, opportunistic, TLSA records ignored', async () => {
    dns.clear();
    dns.set('mx.plain-mail.net', 'A', ['127.0.0.1']);
    dns.set('_25._tcp.mx.plain-mail.net', 'TLSA', [tlsaText(3, 1, 1, certs.leaf)]);
    const result = await lookup().tlsaFor('mx.plain-mail.net');
    expect(result).toMatchObject({ kind: 'insecure' });
    expect(tlsRequirement(result)).toBe('opportunistic');
    // RFC 7672 2.2.2: no TLSA lookup for a host whose address records are insecure.
    expect(dns.queries.map((q) => q.type)).toEqual(['A']);
  });

  it('dns.dnssecValidating false: DANE off, no query sent', async () => {
    expect(await lookup(false).tlsaFor(DANE_MX)).toMatchObject({ kind: 'off' });
    expect(dns.queries).toEqual([]);
  });

  it('SERVFAIL on the TLSA lookup: failed, skip this MX (defer), never plaintext', async () => {
    dns.servfail(`_25._tcp.${DANE_MX}`);
    const result = await lookup().tlsaFor(DANE_MX);
    expect(result).toMatchObject({ kind: 'failed', reason: expect.stringContaining('SERVFAIL') });
    expect(tlsRequirement(result)).toBe('skip-mx');
  });

  it('validated denial (NXDOMAIN) of TLSA: no DANE, opportunistic', async () => {
    dns.remove(`_25._tcp.${DANE_MX}`);
    const result = await lookup().tlsaFor(DANE_MX);
    expect(result).toMatchObject({ kind: 'no-tlsa' });
    expect(tlsRequirement(result)).toBe('opportunistic');
  });

  it('only PKIX-TA/PKIX-EE records: TLS mandatory, not authenticated (RFC 7672 3.1)', async () => {
    dns.set(`_25._tcp.${DANE_MX}`, 'TLSA', [tlsaText(1, 1, 1, certs.leaf), tlsaText(0, 0, 1, certs.ca)]);
    const result = await lookup().tlsaFor(DANE_MX);
    expect(result).toMatchObject({ kind: 'unusable' });
    expect(tlsRequirement(result)).toBe('encrypt');
  });

  it('an address CNAME: TLSA at the expanded name first, both names are reference identifiers', async () => {
    dns.set('alias.dane-mail.net', 'CNAME', [DANE_MX]);
    const result = await lookup().tlsaFor('alias.dane-mail.net');
    expect(result).toMatchObject({ kind: 'dane', tlsaBase: DANE_MX, names: [DANE_MX, 'alias.dane-mail.net'] });
  });

  it('results are cached for the answer TTL', async () => {
    const dane = lookup();
    await dane.tlsaFor(DANE_MX);
    await dane.tlsaFor(DANE_MX);
    expect(dns.queries).toHaveLength(2);
  });

  it('an unsigned MX host is cached as insecure: the second lookup sends no query', async () => {
    dns.clear();
    dns.set('mx.plain-mail.net', 'A', ['127.0.0.1']);
    const dane = lookup();
    expect(await dane.tlsaFor('mx.plain-mail.net')).toMatchObject({ kind: 'insecure' });
    dns.queries.length = 0;
    expect(await dane.tlsaFor('mx.plain-mail.net')).toMatchObject({ kind: 'insecure' });
    expect(dns.queries).toEqual([]);
  });

  it('concurrent lookups for one host share one set of queries', async () => {
    const dane = lookup();
    const [first, second] = await Promise.all([dane.tlsaFor(DANE_MX), dane.tlsaFor(`${DANE_MX.toUpperCase()}.`)]);
    expect(first).toMatchObject({ kind: 'dane' });
    expect(second).toBe(first);
    expect(dns.queries).toHaveLength(2);
  });
});

describe('verifyPeer on a live STARTTLS session', () => {
  let server: SMTPServer;
  let port: number;

  beforeAll(async () => {
    server = new SMTPServer({
      secure: false,
      key: certs.leafKey,
      cert: certs.leafCert + certs.caCert, // the chain: leaf, then its CA
      authOptional: true,
      disabledCommands: ['AUTH'],
      logger: false,
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => callback());
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** STARTTLS as delivery must do it under DANE: TLS required, no PKIX check, then verifyPeer. */
  async function verifyLive(result: DaneResult): Promise<{ ok: boolean; reason: string }> {
    const connection = new SMTPConnection({
      host: '127.0.0.1',
      port,
      requireTLS: true,
      tls: { rejectUnauthorized: false, servername: DANE_MX },
    });
    await new Promise<void>((resolve, reject) => {
      connection.once('error', reject);
      connection.connect(() => resolve());
    });
    try {
      expect(connection.secure).toBe(true);
      return verifyPeer(result, (connection as unknown as { _socket: TLSSocket })._socket);
    } finally {
      connection.quit();
      connection.close();
    }
  }

  it('DANE-EE 3 1 1 of the served leaf: accepted', async () => {
    const verdict = await verifyLive(await lookup().tlsaFor(DANE_MX));
    expect(verdict).toMatchObject({ ok: true, reason: expect.stringContaining('DANE-EE') });
  });

  it('DANE-TA 2 0 1 of the CA in the served chain: accepted', async () => {
    dns.set(`_25._tcp.${DANE_MX}`, 'TLSA', [tlsaText(2, 0, 1, certs.ca)]);
    const verdict = await verifyLive(await lookup().tlsaFor(DANE_MX));
    expect(verdict).toMatchObject({ ok: true, reason: expect.stringContaining('DANE-TA') });
  });

  it('records of another key: refused with the reason', async () => {
    dns.set(`_25._tcp.${DANE_MX}`, 'TLSA', [tlsaText(3, 1, 1, certs.otherCa), tlsaText(2, 0, 1, certs.otherCa)]);
    const verdict = await verifyLive(await lookup().tlsaFor(DANE_MX));
    expect(verdict).toMatchObject({ ok: false, reason: expect.stringMatching(/^DANE: /) });
  });
});
