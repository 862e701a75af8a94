/**
 * Cluster mode: the inbound claims of a node that stopped beating (Coordination.nodesGone) are
 * given back by the nodes still running, as delivery takes back a gone node's leases, so its
 * received messages are POSTed by the others at once instead of after the claims' 5-minute lease
 * (inbound/poster.ts goneNodes). The gone node is a heartbeat row whose last beat is a minute old
 * (one older than 7 days is forgotten at the next beat) and the claim it holds, taken through the
 * store port as that node would have taken it; the running daemon is real, on its own PostgreSQL,
 * with a real receiver.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { sendToInbound } from '../support/inbound.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const SCHEMA = 'inbound_gone_node';
/** The claims' lease (InboundPoster's default): the POST must come well before it. */
const LEASE_MS = 300_000;

describe('inbound claims of a node that stopped beating', () => {
  let pg: PostgresCluster;
  let t: TestDaemon;
  let dns: TestDns;
  let s: Sender;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    pg = await startPostgres();
    receiver = await startWebhookReceiver();
    ({ t, dns } = await startDaemonWithDns({
      'store.postgresUrl': pg.url,
      'store.postgresSchema': SCHEMA,
      'inbound.enabled': true,
      'inbound.port': 0,
      'inbound.concurrency': 1,
      'webhooks.allowHttp': true,
      'webhooks.allowPrivate': true,
    }));
    s = await setupSender(t, dns);
  }, 120_000);

  afterAll(async () => {
    await stopDaemonWithDns({ t, dns });
    await receiver?.close();
    await pg?.stop();
  });

  async function route(local: string, path: string): Promise<string> {
    const res = await t.api('POST', '/inbound/routes', { body: { channelId: s.channelId, address: `${local}@${s.domain}`, url: receiver.url(path) } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return `${local}@${s.domain}`;
  }

  it('posts a message a gone node had claimed without waiting out the lease', async () => {
    let release!: () => void;
    const held = new Promise<{ status: number }>((resolve) => (release = () => resolve({ status: 200 })));
    receiver.on('/busy', () => held);
    receiver.on('/orphan', () => ({ status: 200 }));
    const busy = await route('busy', '/busy');
    const orphan = await route('orphan', '/orphan');

    // The daemon's one place (inbound.concurrency 1) is taken by a POST that waits.
    await sendToInbound(t.daemon.inbound!.port, busy, 'Subject: busy\r\n\r\nwaits\r\n');
    await waitFor(() => receiver.at('/busy').length === 1, { what: 'the first POST', timeout: 20_000 });
    // Received meanwhile, and claimed by another node, which then dies: its beat is long past.
    await sendToInbound(t.daemon.inbound!.port, orphan, 'Subject: orphan\r\n\r\nclaimed by a node that died\r\n');
    const { claims } = await t.daemon.store.inboundMessages.claimDue({ owner: 'node-gone', nowMs: Date.now(), max: 10, leaseMs: LEASE_MS });
    expect(claims).toHaveLength(1);
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(`INSERT INTO "${SCHEMA}".coord_nodes (node_id, run, started_at_ms, heartbeat_at_ms) VALUES ('node-gone', 'r1', ${Date.now() - 120_000}, ${Date.now() - 60_000})`);
    } finally {
      await sql.end();
    }
    const claimedAt = Date.now();
    release();

    // A node judges others gone only once its own beats have run unbroken for the stale time
    // (30 s, heartbeats.ts BeatRun), and looks every 10 s: under a minute from its start.
    const what = "the POST of the gone node's message";
    const [post] = await waitFor(() => receiver.at('/orphan').length > 0 && receiver.at('/orphan'), { what, timeout: 75_000 });
    expect(post.atMs - claimedAt).toBeLessThan(LEASE_MS / 5);
    expect(String(post.headers['x-service-webhook-id'])).toBe(claims[0]!.message.id);
  }, 120_000);
});
