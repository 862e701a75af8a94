/**
 * Automatic shaping in GET /ops/sources and DELETE /ops/sources/{source}/shaping/{site} (issue
 * 35), on the daemon's real HTTP port: a suspension another node of the cluster wrote to the
 * coordination is shown under the source's `shaping`, an operator lifts it for every node, and
 * lifting what does not hold is a 404 not_found. The access is GET /ops/sources' (the metrics
 * token).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import { encodeShaping, shapingKey } from '../../src/delivery/shaping-entries.js';
import { apiRequest } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startSourcesDaemon, type SourcesDaemon } from '../support/sources-daemon.js';

const TOKEN = 'ops-shaping-test-token-0123456789';
const HOUR = 3_600_000;

let dns: TestDns;
let daemon: Daemon;
let d: SourcesDaemon;

beforeAll(async () => {
  dns = await startDnsServer();
  d = await startSourcesDaemon('ops-shaping', {
    'dns.servers': [dns.address],
    'metrics.token': TOKEN,
    'delivery.sources': [
      { name: 'ip2', address: '127.0.0.2', ehloName: 'mta2.sender.test' },
      { name: 'ip3', address: '127.0.0.3', ehloName: 'mta3.sender.test' },
    ],
  });
  daemon = d.daemon;
});

afterAll(async () => {
  await d?.stop();
  await dns?.close();
});

const url = () => `http://127.0.0.1:${daemon.http.port}`;
const PATH = '/ops/sources/ip2/shaping/provider%3Ayahoo';

/** A [TSS04] suspension of ip2 at Yahoo, as another node writes it. */
async function suspendIp2(since: number): Promise<void> {
  const s = { source: 'ip2', target: 'provider:yahoo', site: 'mta5.am0.yahoodns.net', rule: 'yahoo-tss04', action: { kind: 'suspend' as const }, since, until: since + 2 * HOUR };
  await daemon.coordination.entries('source-shaping').set(shapingKey(s.source, s.target), encodeShaping(s), s.until);
}

describe('automatic shaping on the operator’s routes', () => {
  it('shows a source’s shaping written by any node, and lifts it for all of them', async () => {
    const since = Date.now();
    await suspendIp2(since);
    const res = await apiRequest(url(), () => TOKEN, 'GET', '/ops/sources');
    expect(res.status).toBe(200);
    const [ip2, ip3] = res.body.results as Record<string, unknown>[];
    expect(ip2!.shaping).toEqual({
      active: [{ site: 'provider:yahoo', triggeredBy: 'mta5.am0.yahoodns.net', rule: 'yahoo-tss04', action: { kind: 'suspend' }, since: new Date(since).toISOString(), until: new Date(since + 2 * HOUR).toISOString() }],
    });
    expect(ip3!.shaping).toBeUndefined();
    expect(daemon.shaping.check('ip2', 'mta5.am0.yahoodns.net', Date.now())?.until).toBe(since + 2 * HOUR);

    const lifted = await apiRequest(url(), () => TOKEN, 'DELETE', PATH);
    expect(lifted.status).toBe(204);
    expect(daemon.shaping.check('ip2', 'mta5.am0.yahoodns.net', Date.now())).toBeUndefined();
    expect(await daemon.coordination.entries('source-shaping').list(Date.now())).toEqual([]);
    expect(d.lines.filter((l) => l.msg === 'automatic shaping lifted by an operator')).toMatchObject([{ source: 'ip2', site: 'provider:yahoo', rule: 'yahoo-tss04' }]);
    const after = await apiRequest(url(), () => TOKEN, 'GET', '/ops/sources');
    expect((after.body.results as Record<string, unknown>[])[0]!.shaping).toBeUndefined();
  });

  it('answers 404 not_found for a shaping that does not hold (already lifted, unknown source or site, NUL in either)', async () => {
    // A NUL reaches the coordination's statement on PostgreSQL, whose text refuses it (the HTTP fuzz found a 500 there).
    for (const p of [PATH, '/ops/sources/ip9/shaping/provider%3Ayahoo', '/ops/sources/ip3/shaping/mx.example.net', '/ops/sources/%00/shaping/x', '/ops/sources/ip2/shaping/provider%3Ayahoo%00']) {
      const res = await apiRequest(url(), () => TOKEN, 'DELETE', p);
      expect(res.status, p).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });

  it('needs the metrics token (401 without it) and leaves the shaping in place', async () => {
    await suspendIp2(Date.now());
    const res = await apiRequest(url(), () => 'pr_not-the-token', 'DELETE', PATH);
    expect(res.status).toBe(401);
    // Refused before anything of the request is parsed: broken JSON from a stranger is a 401, not a 400.
    const broken = await fetch(`${url()}${PATH}`, { method: 'DELETE', headers: { authorization: 'Bearer pr_not-the-token', 'content-type': 'application/json' }, body: '{bad' });
    expect(broken.status).toBe(401);
    expect(await daemon.coordination.entries('source-shaping').list(Date.now())).toHaveLength(1);
  });
});
