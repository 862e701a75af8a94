/**
 * GET /ops/sources and the reverse DNS check at start (issue 35): four sources on loopback whose
 * PTR records in the test DNS server confirm, contradict or lack their EHLO names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import { apiRequest, startDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startSourcesDaemon, type SourcesDaemon } from '../support/sources-daemon.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'ops-sources-test-token-0123456789';

let dns: TestDns;
let daemon: Daemon;
let d: SourcesDaemon;

beforeAll(async () => {
  dns = await startDnsServer();
  // ip2: forward-confirmed; ip3: its PTR names another host; ip4: no PTR; ip5: the name's A lacks the address.
  dns.set('2.0.0.127.in-addr.arpa', 'PTR', ['mta2.sender.test']);
  dns.set('mta2.sender.test', 'A', ['127.0.0.2']);
  dns.set('3.0.0.127.in-addr.arpa', 'PTR', ['somebody-else.test']);
  dns.set('5.0.0.127.in-addr.arpa', 'PTR', ['mta5.sender.test']);
  dns.set('mta5.sender.test', 'A', ['127.0.0.9']);
  d = await startSourcesDaemon('ops-sources', {
    'dns.servers': [dns.address],
    'metrics.token': TOKEN,
    'delivery.sources': [
      { name: 'ip2', address: '127.0.0.2', ehloName: 'mta2.sender.test' },
      { name: 'ip3', address: '127.0.0.3', ehloName: 'mta3.sender.test', rate: 20 },
      { name: 'ip4', address: '127.0.0.4', ehloName: 'mta4.sender.test' },
      { name: 'ip5', address: '127.0.0.5', ehloName: 'mta5.sender.test' },
    ],
    'delivery.pools': { tx: [{ source: 'ip2', weight: 3 }, { source: 'ip3', weight: 1 }] },
    'delivery.defaultPools.transactional': 'tx',
  });
  daemon = d.daemon;
});

afterAll(async () => {
  await d?.stop();
  await dns?.close();
});

const url = () => `http://127.0.0.1:${daemon.http.port}`;
/** The health gate's view of a source that never failed (delivery/source-health.ts). */
const OK = { status: 'ok', since: null, until: null, reason: null, cause: null, consecutiveFailures: 0 };

describe('GET /ops/sources', () => {
  it('lists each source with its pools and its forward-confirmed reverse DNS status', async () => {
    const res = await apiRequest(url(), () => TOKEN, 'GET', '/ops/sources');
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([
      { name: 'ip2', address: '127.0.0.2', ehloName: 'mta2.sender.test', rate: null, pools: [{ pool: 'tx', weight: 3 }, { pool: 'default', weight: 1 }], ptr: { status: 'confirmed', ptrNames: ['mta2.sender.test'], forwardAddresses: ['127.0.0.2'] }, health: OK },
      { name: 'ip3', address: '127.0.0.3', ehloName: 'mta3.sender.test', rate: 20, pools: [{ pool: 'tx', weight: 1 }, { pool: 'default', weight: 1 }], ptr: { status: 'ptr_mismatch', ptrNames: ['somebody-else.test'], forwardAddresses: [] }, health: OK },
      { name: 'ip4', address: '127.0.0.4', ehloName: 'mta4.sender.test', rate: null, pools: [{ pool: 'default', weight: 1 }], ptr: { status: 'no_ptr', ptrNames: [], forwardAddresses: [] }, health: OK },
      { name: 'ip5', address: '127.0.0.5', ehloName: 'mta5.sender.test', rate: null, pools: [{ pool: 'default', weight: 1 }], ptr: { status: 'forward_mismatch', ptrNames: ['mta5.sender.test'], forwardAddresses: ['127.0.0.9'] }, health: OK },
    ]);
  });

  it('says which pool each mail type goes out through by default', async () => {
    const res = await apiRequest(url(), () => TOKEN, 'GET', '/ops/sources');
    expect(res.body.defaultPools).toEqual({ transactional: 'tx', broadcast: 'default' });
  });

  it('needs the metrics token when one is configured (401 without it)', async () => {
    const res = await apiRequest(url(), () => 'pr_not-the-token', 'GET', '/ops/sources');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
  });

  it('was checked at start: one warn line per source whose reverse DNS does not confirm it', async () => {
    const warned = () => d.lines.filter((l) => l.level === 40 && typeof l.source === 'string').map((l) => [l.source, l.ptr]);
    await waitFor(() => warned().length === 3, { what: 'three warn d.lines' });
    expect(warned().sort()).toEqual([
      ['ip3', 'ptr_mismatch'],
      ['ip4', 'no_ptr'],
      ['ip5', 'forward_mismatch'],
    ]);
  });
});

describe('GET /ops/sources without delivery.sources', () => {
  it('shows the one implicit source, the kernel\'s choice, unchecked; from loopback without a token', async () => {
    const t = await startDaemon({ hostname: 'mta.sender.test' });
    try {
      const res = await fetch(`${t.url}/ops/sources`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        results: [{ name: 'kernel', address: null, ehloName: 'mta.sender.test', rate: null, pools: [{ pool: 'default', weight: 1 }], ptr: { status: 'not_checked', ptrNames: [], forwardAddresses: [] } }],
        defaultPools: { transactional: 'default', broadcast: 'default' },
      });
    } finally {
      await t.stop();
    }
  });
});
