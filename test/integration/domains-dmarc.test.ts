/**
 * Issue 21: the advisory DMARC record (RFC 7489) in a domain's dnsRecords, against a real daemon
 * whose DNS server is the in-process test server. Missing, it is listed as such and the domain
 * still verifies and sends; a DMARC record the domain publishes itself is verified as it is; other
 * TXT records at _dmarc do not count; the configured report address appears as rua.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startDaemon, startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { HOSTNAME, newDomain, PUBLIC_URL, uniqueName, type DnsRecords } from '../support/domains.js';
import { publishAll, setupSender } from '../support/sending.js';

/** What a verify that found the record stores as its `check`. */
const MATCH = { result: 'match', checkedAt: expect.any(String) };

let t: TestDaemon;
let dns: TestDns;

beforeAll(async () => ({ t, dns } = await startDaemonWithDns({ hostname: HOSTNAME, publicUrl: PUBLIC_URL })));
afterAll(() => stopDaemonWithDns({ t, dns }));
afterEach(() => dns.clear());

async function verify(id: string, daemon = t): Promise<DnsRecords> {
  const res = await daemon.api('POST', `/domains/${id}/verify`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function get(id: string, daemon = t) {
  const res = await daemon.api('GET', `/domains/${id}`);
  expect(res.status).toBe(200);
  return res.body as { verified: boolean; dnsRecords: DnsRecords; warnings?: Array<{ code: string; setting: string; message: string }> };
}

/** A domain with its required records (DKIM, return path) published and verified. */
async function verifiedDomain(daemon = t) {
  const d = await newDomain(daemon, { name: uniqueName() });
  publishAll(dns, d.dnsRecords);
  const records = await verify(d.id, daemon);
  expect((await get(d.id, daemon)).verified).toBe(true);
  return { ...d, dnsRecords: records };
}

describe('the DMARC record of a domain', () => {
  it('is recommended on create, pending, as v=DMARC1; p=none at _dmarc.<domain>, with a warning that no report address is set', async () => {
    const name = uniqueName();
    const created = await t.api('POST', '/domains', { body: { name } });
    expect(created.status).toBe(200);
    expect(created.body.dnsRecords.dmarc).toEqual({ type: 'txt', host: `_dmarc.${name}`, value: 'v=DMARC1; p=none', status: 'pending', lastCheckedAt: null, warnings: created.body.warnings });
    expect(created.body.warnings).toEqual([
      { code: 'dmarc_report_address_unset', setting: 'domains.dmarcReportAddress', message: expect.stringContaining('POSTRIDER_DOMAINS_DMARC_REPORT_ADDRESS') },
    ]);
    expect((await get(created.body.id)).dnsRecords.dmarc).toEqual(created.body.dnsRecords.dmarc);
  });

  it('is listed as failed when missing, and the domain is verified and sends all the same', async () => {
    const sender = await setupSender(t, dns);
    const d = await get(sender.domainId);
    expect(d.verified).toBe(true);
    expect(d.dnsRecords.dmarc.status).toBe('failed');
    expect(d.dnsRecords.dmarc.lastCheckedAt).not.toBeNull();
    expect(d.dnsRecords.dmarc.value).toBe('v=DMARC1; p=none');
    const sent = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': sender.channelId },
      body: { from: { email: `shop@${sender.domain}` }, to: [{ email: 'ann@example.net' }], subject: 'Order', text: 'Thanks' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  });

  it('verifies the recommended record once published, and drops the warning', async () => {
    const d = await verifiedDomain();
    dns.set(d.dnsRecords.dmarc.host, 'TXT', [d.dnsRecords.dmarc.value]);
    expect((await verify(d.id)).dmarc).toMatchObject({ value: 'v=DMARC1; p=none', status: 'verified' });
    expect((await get(d.id)).warnings).toBeUndefined();
  });

  it("verifies the domain's own DMARC record as published, without asking to replace it", async () => {
    const d = await verifiedDomain();
    const own = 'v=DMARC1;p=reject;rua=mailto:dmarc@corp.example.org;pct=100';
    dns.set(d.dnsRecords.dmarc.host, 'TXT', ['google-site-verification=abc', own]);
    const records = await verify(d.id);
    expect(records.dmarc).toMatchObject({ type: 'txt', host: d.dnsRecords.dmarc.host, value: own, status: 'verified' });
    const read = await get(d.id);
    expect(read.dnsRecords.dmarc).toEqual(records.dmarc);
    expect(read.warnings).toBeUndefined();
  });

  it('joins a DMARC record split into several character-strings before reading it (RFC 7208 3.3 style)', async () => {
    const d = await verifiedDomain();
    const rua = Array.from({ length: 12 }, (_, i) => `mailto:dmarc-reports-${i}@aggregate.example.org`).join(',');
    const long = `v=DMARC1; p=quarantine; rua=${rua}`;
    expect(Buffer.byteLength(long)).toBeGreaterThan(255); // the test server splits it at 255 bytes
    dns.set(d.dnsRecords.dmarc.host, 'TXT', [long]);
    expect((await verify(d.id)).dmarc).toMatchObject({ value: long, status: 'verified' });
  });

  it('does not count TXT records at _dmarc that are not one DMARC record (RFC 7489 6.4, 6.6.3)', async () => {
    const d = await verifiedDomain();
    const host = d.dnsRecords.dmarc.host;
    const notDmarc = [
      ['v=spf1 -all'],
      ['v=DMARC2; p=none'],
      ['p=none; v=DMARC1'], // v must be the first tag
      ['v=dmarc1; p=none'], // the value is case-sensitive
      ['v=DMARC1x; p=none'],
      ['v=DMARC1; p=none', 'v=DMARC1; p=reject'], // two records: receivers apply no DMARC
    ];
    for (const txt of notDmarc) {
      dns.set(host, 'TXT', txt);
      const records = await verify(d.id);
      expect(records.dmarc, JSON.stringify(txt)).toMatchObject({ value: 'v=DMARC1; p=none', status: 'failed' });
    }
    expect((await get(d.id)).verified).toBe(true);
  });

  it('is kept current by the periodic re-check: failing when it disappears, verified when back, the domain verified throughout', async () => {
    const d = await verifiedDomain();
    const own = 'v=DMARC1; p=none; rua=mailto:me@corp.example.org';
    dns.set(d.dnsRecords.dmarc.host, 'TXT', [own]);
    expect((await verify(d.id)).dmarc.status).toBe('verified');

    dns.remove(d.dnsRecords.dmarc.host);
    await t.daemon.domainRecheck.runOnce();
    const gone = await get(d.id);
    expect(gone.dnsRecords.dmarc).toMatchObject({ value: 'v=DMARC1; p=none', status: 'failing' });
    expect(gone.verified).toBe(true);

    dns.set(d.dnsRecords.dmarc.host, 'TXT', [own]);
    await t.daemon.domainRecheck.runOnce();
    const back = await get(d.id);
    expect(back.dnsRecords.dmarc).toMatchObject({ value: own, status: 'verified' });
    expect(back.verified).toBe(true);
  });
});

describe("a subdomain's DMARC record inherited from its Organizational Domain (RFC 7489 6.6.3)", () => {
  /** A verified sending domain mail.<org>, whose Organizational Domain <org> is under co.uk (Public Suffix List). */
  async function subdomain() {
    const org = uniqueName('shop').replace(/\.com$/, '.co.uk');
    const d = await newDomain(t, { name: `mail.${org}` });
    publishAll(dns, d.dnsRecords);
    await verify(d.id);
    return { ...d, org };
  }

  it.each(['v=DMARC1; p=reject; rua=mailto:dmarc@shop-reports.net', 'v=DMARC1; p=none'])(
    'without a record of its own, the organization\'s (%s) applies: verified, at its host, inherited',
    async (orgRecord) => {
      const d = await subdomain();
      dns.set(`_dmarc.${d.org}`, 'TXT', ['v=spf1 -all', orgRecord]);
      const records = await verify(d.id);
      expect(records.dmarc).toEqual({ type: 'txt', host: `_dmarc.${d.org}`, value: orgRecord, status: 'verified', lastCheckedAt: expect.any(String), check: MATCH, inheritedFrom: d.org });
      const read = await get(d.id);
      expect(read.dnsRecords.dmarc).toEqual(records.dmarc);
      expect(read.verified).toBe(true);
      expect(read.warnings).toBeUndefined();
    },
  );

  it("prefers the domain's own record, and does not fall back past two of its own (step 5: no DMARC)", async () => {
    const d = await subdomain();
    dns.set(`_dmarc.${d.org}`, 'TXT', ['v=DMARC1; p=reject']);
    dns.set(`_dmarc.${d.name}`, 'TXT', ['v=DMARC1; p=quarantine']);
    expect((await verify(d.id)).dmarc).toEqual({ type: 'txt', host: `_dmarc.${d.name}`, value: 'v=DMARC1; p=quarantine', status: 'verified', lastCheckedAt: expect.any(String), check: MATCH });
    dns.set(`_dmarc.${d.name}`, 'TXT', ['v=DMARC1; p=quarantine', 'v=DMARC1; p=none']);
    expect((await verify(d.id)).dmarc).toMatchObject({ host: `_dmarc.${d.name}`, value: 'v=DMARC1; p=none', status: 'failing' });
    expect((await verify(d.id)).dmarc.inheritedFrom).toBeUndefined();
  });

  it("goes failing, back at the domain's own host, when the organization's record disappears", async () => {
    const d = await subdomain();
    dns.set(`_dmarc.${d.org}`, 'TXT', ['v=DMARC1; p=reject']);
    expect((await verify(d.id)).dmarc).toMatchObject({ status: 'verified', inheritedFrom: d.org });
    dns.remove(`_dmarc.${d.org}`);
    await t.daemon.domainRecheck.runOnce();
    const gone = await get(d.id);
    expect(gone.dnsRecords.dmarc).toEqual({ type: 'txt', host: `_dmarc.${d.name}`, value: 'v=DMARC1; p=none', status: 'failing', lastCheckedAt: expect.any(String), check: { result: 'missing', checkedAt: expect.any(String) }, warnings: gone.warnings });
    expect(gone.verified).toBe(true);
  });

  it('looks up no organization for a domain that is its own Organizational Domain', async () => {
    const d = await verifiedDomain();
    dns.queries.length = 0;
    await verify(d.id);
    expect(dns.queries.filter((q) => q.name.startsWith('_dmarc.')).map((q) => q.name)).toEqual([`_dmarc.${d.name}`]);
  });
});

describe('domains.dmarcReportAddress', () => {
  let withRua: TestDaemon;
  beforeAll(async () => {
    // Same test DNS server, another setting.
    withRua = await startDaemon({ 'dns.servers': [dns.address], hostname: HOSTNAME, publicUrl: PUBLIC_URL, 'domains.dmarcReportAddress': 'dmarc@reports.example.net' });
  });
  afterAll(() => withRua?.stop());

  it('appears as the rua of the recommended record, which verifies once published, and no warning is given', async () => {
    const name = uniqueName();
    const created = await withRua.api('POST', '/domains', { body: { name } });
    expect(created.status).toBe(200);
    expect(created.body.dnsRecords.dmarc).toMatchObject({ host: `_dmarc.${name}`, value: 'v=DMARC1; p=none; rua=mailto:dmarc@reports.example.net', status: 'pending' });
    expect(created.body.warnings).toBeUndefined();
    dns.set(`_dmarc.${name}`, 'TXT', [created.body.dnsRecords.dmarc.value]);
    expect((await verify(created.body.id, withRua)).dmarc.status).toBe('verified');
  });

  it('refuses an address a DMARC URI list cannot carry', () => {
    for (const bad of ['not-an-address', 'a,b@reports.example.net', 'x@y!10m', 'a b@example.net']) {
      expect(() => loadConfig({ env: {}, overrides: { 'domains.dmarcReportAddress': bad } }), bad).toThrow(/dmarcReportAddress/);
    }
    expect(loadConfig({ env: {}, overrides: { 'domains.dmarcReportAddress': 'dmarc+acme@reports.example.net' } }).domains.dmarcReportAddress).toBe(
      'dmarc+acme@reports.example.net',
    );
  });
});

