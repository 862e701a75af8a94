/**
 * domains.mxHost: the host every domain's return-path MX and SPF name, the same on every node of
 * a cluster while each node keeps its own `hostname` (its EHLO name). Without it each node showed
 * and checked its own hostname: a domain published as one node showed it was verified through
 * another node failed (the load balancer picks the node), and the records GET /domains/{id}
 * showed changed from one request to the next. Here "another node" is a second daemon, with
 * another hostname, started on the first one's store.
 * Real daemons on loopback, the in-process test DNS server.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log/logger.js';
import { apiRequest, startDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import type { DnsRecords } from '../support/domains.js';
import { publishAll, setupSender } from '../support/sending.js';
import { testStoreOverrides } from '../support/store.js';

type Domain = { id: string; verified: boolean; dnsRecords: DnsRecords };

const MX_HOST = 'mail.cluster-test.net';
let t: TestDaemon | undefined;
let dns: TestDns | undefined;
let second: Daemon | undefined;

afterEach(async () => {
  await second?.stop();
  if (t) fs.rmSync(t.dataDir, { recursive: true, force: true });
  await dns?.close();
  t = dns = second = undefined;
});

describe('domains.mxHost', () => {
  it('names the return-path MX and SPF on every node alike, so that a domain verified through one node stays verified through another', async () => {
    ({ t, dns } = await startDaemonWithDns({ hostname: 'node-a.cluster-test.net', 'domains.mxHost': MX_HOST }));
    const sender = await setupSender(t, dns, { verify: false });
    const shown = (await t.api('GET', `/domains/${sender.domainId}`)).body as Domain;
    expect(shown.dnsRecords.returnPath.map((r) => r.value)).toEqual([`10 ${MX_HOST}`, `v=spf1 a:${MX_HOST} ~all`]);
    publishAll(dns, shown.dnsRecords);

    // The other node, with a hostname of its own, verifies what the first one showed.
    await t.daemon.stop();
    const config = loadConfig({
      env: {},
      overrides: {
        dataDir: t.dataDir,
        ...testStoreOverrides(t.dataDir),
        'http.port': 0,
        'log.level': 'silent',
        'smtp.enabled': false,
        'delivery.enabled': false,
        'dns.servers': [dns.address],
        hostname: 'node-b.cluster-test.net',
        'domains.mxHost': MX_HOST,
      },
    });
    second = new Daemon(config, createLogger({ level: 'silent' }));
    await second.start();
    const key = t.apiKey;
    const api = (method: string, path: string) => apiRequest(`http://127.0.0.1:${second!.http.port}`, () => key, method, path);
    const verified = (await api('POST', `/domains/${sender.domainId}/verify`)).body as DnsRecords & { verified: boolean };
    expect(verified.verified).toBe(true);
    expect(verified.returnPath.map((r) => [r.value, r.status])).toEqual([
      [`10 ${MX_HOST}`, 'verified'],
      [`v=spf1 a:${MX_HOST} ~all`, 'verified'],
    ]);
  });

  it('is refused unless a fully qualified host name', () => {
    for (const bad of ['vm', '192.0.2.10']) {
      expect(() => loadConfig({ env: {}, overrides: { 'domains.mxHost': bad } })).toThrow(/domains\.mxHost.*fully qualified/s);
    }
  });
});
