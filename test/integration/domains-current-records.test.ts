/**
 * Issue 30 items 3 and 5: a domain's records are those of the current settings whenever they are
 * read, each with the warnings that make it unpublishable and the setting to change; a settings
 * change between two starts shows on the next read (no verify needed) without stopping a verified
 * domain from sending; verify answers `verified` and, per record, what DNS had (`check`).
 * Real daemons on loopback, the in-process test DNS server.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log/logger.js';
import { apiRequest, startDaemonWithDns, stopDaemonWithDns, type ApiOptions, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { HOSTNAME, newDomain, PUBLIC_URL, uniqueName, type DnsRecords } from '../support/domains.js';
import { publish, publishAll, setupSender } from '../support/sending.js';
import { testStoreOverrides } from '../support/store.js';

type Warning = { code: string; setting: string; message: string };
type Domain = { id: string; verified: boolean; dnsRecords: DnsRecords; warnings?: Warning[] };
type Verified = DnsRecords & { verified: boolean };

let t: TestDaemon | undefined;
let dns: TestDns | undefined;
let second: Daemon | undefined;

afterEach(async () => {
  if (second) {
    // The first daemon was stopped before the second started on its data folder.
    await second.stop();
    fs.rmSync(t!.dataDir, { recursive: true, force: true });
    await dns?.close();
  } else {
    await stopDaemonWithDns({ t, dns });
  }
  t = dns = second = undefined;
});

async function start(overrides: Record<string, unknown>): Promise<TestDaemon> {
  ({ t, dns } = await startDaemonWithDns(overrides));
  return t;
}

const codes = (ws: Warning[] | undefined) => (ws ?? []).map((w) => `${w.code}:${w.setting}`);

async function created(d: TestDaemon): Promise<Domain> {
  const made = await newDomain(d, { name: uniqueName() });
  return (await d.api('GET', `/domains/${made.id}`)).body as Domain;
}

describe('warnings on each record that cannot work as published', () => {
  it('out of the box (hostname vm, publicUrl http://127.0.0.1:<port>): the MX and SPF name a short host, the CNAMEs an IP literal on loopback', async () => {
    const d = await created(await start({ hostname: 'vm' }));
    for (const r of d.dnsRecords.returnPath) expect(codes(r.warnings)).toEqual(['hostname_not_fqdn:hostname']);
    for (const r of [d.dnsRecords.tracking!, d.dnsRecords.unsubscribe!]) {
      expect(r.value).toBe('127.0.0.1');
      expect(codes(r.warnings)).toEqual(['link_host_ip_literal:publicUrl', 'link_host_not_public:publicUrl']);
      expect(r.warnings![0].message).toContain('POSTRIDER_PUBLIC_URL');
    }
    expect(d.dnsRecords.domainKeyActive).not.toHaveProperty('warnings');
    expect(codes(d.warnings)).toEqual([
      'hostname_not_fqdn:hostname',
      'link_host_ip_literal:publicUrl',
      'link_host_not_public:publicUrl',
      'dmarc_report_address_unset:domains.dmarcReportAddress',
    ]);
    expect(codes(d.dnsRecords.dmarc.warnings)).toEqual(['dmarc_report_address_unset:domains.dmarcReportAddress']);
  });

  it('an IP address as hostname: an MX cannot name one (RFC 5321 5.1)', async () => {
    const d = await created(await start({ hostname: '192.0.2.25', publicUrl: PUBLIC_URL }));
    expect(d.dnsRecords.returnPath[0].value).toBe('10 192.0.2.25');
    expect(codes(d.dnsRecords.returnPath[0].warnings)).toEqual(['hostname_not_fqdn:hostname']);
    expect(d.dnsRecords.returnPath[0].warnings![0].message).toContain('IP address');
    expect(d.dnsRecords.tracking).not.toHaveProperty('warnings');
  });

  it.each([
    ['http://localhost:8080', ['link_host_not_fqdn:publicUrl', 'link_host_not_public:publicUrl']],
    ['https://10.1.2.3', ['link_host_ip_literal:publicUrl', 'link_host_not_public:publicUrl']],
    ['http://[::1]:8080', ['link_host_ip_literal:publicUrl', 'link_host_not_public:publicUrl']],
    ['https://93.184.215.14', ['link_host_ip_literal:publicUrl']],
    ['https://mail.localhost', ['link_host_not_public:publicUrl']],
    [PUBLIC_URL, []],
  ])('publicUrl %s: the link CNAMEs warn %j', async (publicUrl, expected) => {
    const d = await created(await start({ hostname: HOSTNAME, publicUrl }));
    expect(codes(d.dnsRecords.tracking!.warnings)).toEqual(expected);
    expect(codes(d.dnsRecords.unsubscribe!.warnings)).toEqual(expected);
    expect(d.dnsRecords.returnPath[0]).not.toHaveProperty('warnings');
  });
});

describe('records follow the settings between two starts on the same data folder', () => {
  /** Stops the first daemon and starts another on its data folder with other settings. */
  async function restartWith(overrides: Record<string, unknown>) {
    await t!.daemon.stop();
    const config = loadConfig({
      env: {},
      overrides: { dataDir: t!.dataDir, ...testStoreOverrides(t!.dataDir), 'http.port': 0, 'log.level': 'silent', 'smtp.enabled': false, 'delivery.enabled': false, 'dns.servers': [dns!.address], ...overrides },
    });
    second = new Daemon(config, createLogger({ level: 'silent' }));
    await second.start();
    const key = t!.apiKey;
    const url = `http://127.0.0.1:${second.http.port}`;
    return (method: string, path: string, o?: ApiOptions) => apiRequest(url, () => key, method, path, o);
  }

  it('shows the new values (pending, no stale warning) on the next read, keeps the domain sending with the records it was verified with, and drops them once the new ones are verified', async () => {
    const first = await start({ hostname: 'vm' });
    const sender = await setupSender(first, dns!);
    const before = (await first.api('GET', `/domains/${sender.domainId}`)).body as Domain;
    expect(before.verified).toBe(true);
    expect(before.dnsRecords.returnPath.map((r) => r.value)).toEqual(['10 vm', 'v=spf1 a:vm ~all']);
    publish(dns!, before.dnsRecords.tracking!); // a CNAME to 127.0.0.1, verified for the old publicUrl
    await first.api('POST', `/domains/${sender.domainId}/verify`);

    const api = await restartWith({ hostname: HOSTNAME, publicUrl: PUBLIC_URL, 'domains.dmarcReportAddress': 'dmarc@reports.postrider-test.net' });
    const read = (await api('GET', `/domains/${sender.domainId}`)).body as Domain;
    expect(read.warnings).toBeUndefined();
    const [mx, spf] = read.dnsRecords.returnPath;
    expect(mx).toEqual({ type: 'mx', host: before.dnsRecords.returnPath[0].host, value: `10 ${HOSTNAME}`, status: 'pending', lastCheckedAt: null, replaces: { host: mx.host, value: '10 vm', lastCheckedAt: expect.any(String) } });
    expect(spf).toMatchObject({ value: `v=spf1 a:${HOSTNAME} ~all`, status: 'pending', replaces: { value: 'v=spf1 a:vm ~all' } });
    expect(read.dnsRecords.tracking).toEqual({ type: 'cname', host: before.dnsRecords.tracking!.host, value: 'mta.postrider-test.net', status: 'pending', lastCheckedAt: null });
    expect(read.dnsRecords.dmarc.value).toBe('v=DMARC1; p=none; rua=mailto:dmarc@reports.postrider-test.net');
    // The domain still sends: the records it was verified with are what DNS has.
    expect(read.verified).toBe(true);
    const send = () =>
      api('POST', '/send/transactional', {
        headers: { 'x-service-channel-id': sender.channelId },
        body: { from: { email: `shop@${sender.domain}` }, to: [{ email: 'ann@example.net' }], subject: 'Hi', text: 'Hello' },
      });
    expect((await send()).status).toBe(200);

    // Verify while only the old records are published: the new ones are failed (what DNS has is shown), the domain verified.
    const stillOld = (await api('POST', `/domains/${sender.domainId}/verify`)).body as Verified;
    expect(stillOld.verified).toBe(true);
    expect(stillOld.returnPath[0]).toMatchObject({ status: 'failed', check: { result: 'mismatch', found: ['10 vm'] }, replaces: { value: '10 vm' } });
    expect((await send()).status).toBe(200);

    // The new records published: verified, the old ones forgotten, and removing those changes nothing.
    for (const r of stillOld.returnPath) publish(dns!, r);
    const current = (await api('POST', `/domains/${sender.domainId}/verify`)).body as Verified;
    expect(current.verified).toBe(true);
    for (const r of current.returnPath) {
      expect(r).toMatchObject({ status: 'verified', check: { result: 'match' } });
      expect(r).not.toHaveProperty('replaces');
    }
    expect(((await api('GET', `/domains/${sender.domainId}`)).body as Domain).dnsRecords.returnPath).toEqual(current.returnPath);
  });

  it('a verified domain whose old records are gone and whose new ones are not published loses verification at the next check', async () => {
    const first = await start({ hostname: 'vm' });
    const sender = await setupSender(first, dns!);
    const api = await restartWith({ hostname: HOSTNAME });
    for (const r of sender.dnsRecords.returnPath) dns!.remove(r.host);
    expect(((await api('GET', `/domains/${sender.domainId}`)).body as Domain).verified).toBe(true);
    const after = (await api('POST', `/domains/${sender.domainId}/verify`)).body as Verified;
    expect(after.verified).toBe(false);
    expect(after.returnPath.map((r) => [r.status, r.check?.result, r.replaces])).toEqual([
      ['failed', 'missing', undefined],
      ['failed', 'missing', undefined],
    ]);
  });

  it('warnings follow the settings: none after a restart with a fully qualified hostname and a public publicUrl, without a verify', async () => {
    const first = await start({ hostname: 'vm' });
    const d = await newDomain(first, { name: uniqueName() });
    expect(codes((await first.api('GET', `/domains/${d.id}`)).body.warnings)).toContain('hostname_not_fqdn:hostname');
    const api = await restartWith({ hostname: HOSTNAME, publicUrl: PUBLIC_URL, 'domains.dmarcReportAddress': 'dmarc@reports.postrider-test.net' });
    const read = (await api('GET', `/domains/${d.id}`)).body as Domain;
    expect(read).not.toHaveProperty('warnings');
    expect(read.dnsRecords.returnPath.map((r) => [r.value, r.status, r.warnings])).toEqual([
      [`10 ${HOSTNAME}`, 'pending', undefined],
      [`v=spf1 a:${HOSTNAME} ~all`, 'pending', undefined],
    ]);
  });
});

describe('what verify says it found', () => {
  it('answers verified: false and, per record, missing when nothing is published', async () => {
    const d = await newDomain(await start({ hostname: HOSTNAME }), { name: uniqueName() });
    const res = await t!.api('POST', `/domains/${d.id}/verify`);
    expect(res.status).toBe(200);
    const v = res.body as Verified;
    expect(v.verified).toBe(false);
    for (const r of [v.domainKeyActive, ...v.returnPath, v.tracking!, v.unsubscribe!, v.dmarc]) {
      expect(r.check).toEqual({ result: 'missing', checkedAt: r.lastCheckedAt });
    }
    expect(((await t!.api('GET', `/domains/${d.id}`)).body as Domain).dnsRecords.returnPath[0].check).toEqual(v.returnPath[0].check);
  });

  it('answers mismatch with the values found, at most 5 of at most 300 characters', async () => {
    const d = await newDomain(await start({ hostname: HOSTNAME }), { name: uniqueName() });
    const [mx, spf] = d.dnsRecords.returnPath;
    dns!.set(mx.host, 'MX', [{ priority: 10, exchange: 'mx.elsewhere.net' }]);
    const long = `v=spf1 ${'ip4:192.0.2.1 '.repeat(40)}-all`;
    dns!.set(spf.host, 'TXT', [long, 'a', 'b', 'c', 'd', 'e', 'f']);
    dns!.set(d.dnsRecords.domainKeyActive.host, 'TXT', ['v=DKIM1; k=rsa; p=MIIBother']);
    dns!.set(d.dnsRecords.tracking!.host, 'CNAME', ['links.elsewhere.net']);
    dns!.set(d.dnsRecords.dmarc.host, 'TXT', ['v=DMARC1; p=none', 'v=DMARC1; p=reject']);
    const v = (await t!.api('POST', `/domains/${d.id}/verify`)).body as Verified;
    expect(v.verified).toBe(false);
    expect(v.returnPath[0].check).toEqual({ result: 'mismatch', checkedAt: expect.any(String), found: ['10 mx.elsewhere.net'] });
    expect(v.domainKeyActive.check).toMatchObject({ result: 'mismatch', found: ['v=DKIM1; k=rsa; p=MIIBother'] });
    expect(v.tracking!.check).toMatchObject({ result: 'mismatch', found: ['links.elsewhere.net'] });
    expect(v.dmarc.check).toMatchObject({ result: 'mismatch', found: ['v=DMARC1; p=none', 'v=DMARC1; p=reject'] });
    const found = v.returnPath[1].check!;
    expect(found.result).toBe('mismatch');
    expect(found.foundTruncated).toBe(true);
    expect(found.found).toHaveLength(5);
    expect(found.found![0]).toBe(`${long.slice(0, 300)}…`);
  });

  it('answers match per record, and verified: true, once all is published', async () => {
    const d = await newDomain(await start({ hostname: HOSTNAME }), { name: uniqueName() });
    publishAll(dns!, d.dnsRecords);
    const v = (await t!.api('POST', `/domains/${d.id}/verify`)).body as Verified;
    expect(v.verified).toBe(true);
    for (const r of [v.domainKeyActive, ...v.returnPath]) expect(r.check).toEqual({ result: 'match', checkedAt: r.lastCheckedAt });
  });

  it('records lookup_failed per record when DNS fails (the verify is a 503 naming the host), and GET shows it', async () => {
    const d = await newDomain(await start({ hostname: HOSTNAME }), { name: uniqueName() });
    publishAll(dns!, d.dnsRecords);
    dns!.servfail(d.dnsRecords.tracking!.host);
    const res = await t!.api('POST', `/domains/${d.id}/verify`);
    expect(res.status).toBe(503);
    expect(res.body.detail).toContain(d.dnsRecords.tracking!.host);
    const read = (await t!.api('GET', `/domains/${d.id}`)).body as Domain;
    expect(read.dnsRecords.tracking).toMatchObject({ status: 'pending', lastCheckedAt: null, check: { result: 'lookup_failed' } });
    expect(read.dnsRecords.returnPath[0].check).toMatchObject({ result: 'match' });
  });
});
