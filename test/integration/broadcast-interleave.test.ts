/**
 * A large broadcast expands in the background through the same worker pool, event loop and store
 * as transactional sends: the expander works in bounded batches and chunks and yields between
 * them, so a send that arrives meanwhile is answered while the expansion is still going, not
 * after it. Ordered by events (the broadcast's cursor in the store), never by timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const ENTRIES = 10_000;

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns());
  s = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('a transactional send during a broadcast expansion', () => {
  it('is answered before the expansion finishes', async () => {
    const messages = Array.from({ length: ENTRIES }, (_, i) => ({ to: [{ email: `user${i}@example.net` }], data: { n: i } }));
    const accepted = await t.api('POST', '/send/broadcast', {
      body: { from: { email: `promo@${s.domain}` }, template: { subject: 'Number {{n}}', text: 'n={{n}}' }, messages },
      headers: { 'x-service-channel-id': s.channelId },
    });
    expect(accepted.status).toBe(200);
    const id: string = accepted.body.broadcastId;
    // The expansion is under way once its first batch is committed.
    await waitFor(async () => ((await t.daemon.store.broadcasts.get(id))?.cursor ?? 0) > 0, { what: 'the first expanded batch', timeout: 60_000 });

    for (let i = 0; i < 3; i++) {
      const sent = await t.api('POST', '/send/transactional', {
        body: { from: { email: `receipts@${s.domain}` }, to: [{ email: `buyer${i}@example.net` }], subject: 'Your receipt', text: 'Thank you.' },
        headers: { 'x-service-channel-id': s.channelId },
      });
      expect(sent.status).toBe(200);
      // Answered while entries were still waiting to be expanded.
      expect((await t.daemon.store.broadcasts.get(id))).toMatchObject({ state: 'expanding' });
    }

    expect((await t.api('POST', `/broadcasts/${id}/cancel`)).status).toBe(200);
    await t.daemon.submission.expander.drain();
    const b = (await t.daemon.store.broadcasts.get(id))!;
    expect(b.canceledAt).toBeDefined();
    expect(b.cursor).toBeLessThan(ENTRIES);
  }, 120_000);
});
