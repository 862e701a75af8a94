/**
 * The Queue pages in chromium, with delivery on: a live channel's recipient domain has its MX
 * (in the test DNS server) on a loopback smtp-server that answers 451 to every RCPT, so its
 * messages wait between attempts. The summary shows the destination with its last reply; its
 * page lists the messages; Retry makes one due now (another attempt, another 451); Drop, after
 * the dialog, ends one (a bounced event, gone from the queue). A message whose composition and
 * signature are held shows as being prepared, not as due.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { useRig } from './harness.js';

const DEST = 'slow-harbor.net';
const GREYLIST = { code: 451, message: '4.7.1 Greylisted, try again later' };

let mx: MxServer;
let live: Sender;

// Registered before useRig's hooks: the MX server starts before the rig and (after-hooks run in
// reverse order) closes after it stops.
beforeAll(async () => {
  mx = await startMxServer({ address: '127.0.32.2', starttls: false });
});

afterAll(async () => {
  await mx?.close();
});

const rig = useRig({
  daemon: () => ({ 'delivery.enabled': true, 'delivery.port': mx.port, 'delivery.allowPrivate': true }),
  prepare: async (r) => {
    r.dns.set(DEST, 'MX', [{ priority: 10, exchange: `mx.${DEST}` }]);
    r.dns.set(`mx.${DEST}`, 'A', ['127.0.32.2']);
    live = await setupSender(r.t, r.dns, { deliveryType: 'live' });
  },
});

async function send(to: string, subject: string): Promise<string> {
  for (let i = 0; i < 10; i++) mx.scriptRcpt(to, GREYLIST);
  const res = await rig.t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': live.channelId },
    body: { from: { email: `app@${live.domain}` }, to: [{ email: to }], subject, text: 'Hello' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId;
}

/** The message's job to DEST once it has `attempts` attempts and waits again. */
async function waitingAfter(messageId: string, attempts: number) {
  return waitFor(
    async () => {
      const page = (await rig.t.api('GET', `/queue/messages?destination=${DEST}`)).body;
      const job = page.results.find((m: { messageId: string }) => m.messageId === messageId)?.destinations[0];
      if (!job || job.state !== 'queued' || job.attempts < attempts) throw new Error(`job is ${JSON.stringify(job)}`);
      return job;
    },
    { what: `message ${messageId} deferred ${attempts} time(s)`, timeout: 15_000 },
  );
}

describe('queue pages', () => {
  it('says nothing is waiting when the queue is empty', async () => {
    await rig.visit('/queue');
    await rig.page.getByRole('heading', { name: 'Nothing waiting: every message was delivered or ended' }).waitFor();
    await rig.checkA11y();
    await rig.screenshot('queue-empty');
  });

  it('shows a destination with its waiting messages and last reply, retries one and drops another', async () => {
    const first = await send(`ann@${DEST}`, 'Invoice 1');
    const second = await send(`bob@${DEST}`, 'Invoice 2');
    await waitingAfter(first, 1);
    await waitingAfter(second, 1);

    await rig.visit('/queue');
    const page = rig.page;
    const row = page.getByRole('row', { name: new RegExp(DEST) });
    await row.getByText('451 4.7.1 Greylisted').waitFor();
    expect(await row.getByRole('cell', { name: '2', exact: true }).count()).toBeGreaterThan(0);
    await rig.checkA11y();
    await rig.screenshot('queue');

    await page.getByRole('link', { name: DEST }).click();
    await page.getByRole('heading', { level: 1, name: DEST }).waitFor();
    await page.getByRole('link', { name: 'Invoice 1' }).waitFor();
    await page.getByRole('link', { name: 'Invoice 2' }).waitFor();
    await rig.checkA11y();
    await rig.screenshot('queue-destination');

    await page.getByRole('button', { name: 'Retry Invoice 1 now' }).click();
    await page.getByRole('status').getByText('Invoice 1: due now').waitFor();
    await waitingAfter(first, 2);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.getByRole('row', { name: /Invoice 1/ }).getByRole('cell', { name: '2', exact: true }).waitFor();

    await page.getByRole('button', { name: 'Drop Invoice 2' }).click();
    const dialog = page.getByRole('dialog', { name: 'Drop this message?' });
    await dialog.waitFor();
    await rig.checkA11y();
    await dialog.getByRole('button', { name: 'Drop' }).click();
    await page.getByRole('status').getByText('Invoice 2: dropped').waitFor();
    await page.getByRole('row', { name: /Invoice 2/ }).getByText('ended').first().waitFor();
    await expect.poll(() => page.evaluate('document.activeElement && document.activeElement.id')).toBe('page-title');

    // Ended for the API too: a bounced event, no longer in the queue.
    const bounced = await rig.t.api('GET', `/activity/events?messageId=${second}&eventTypes=bounced`);
    expect(bounced.body.results).toHaveLength(1);
    const queued = await rig.t.api('GET', `/queue/messages?destination=${DEST}`);
    expect(queued.body.results.map((m: { messageId: string }) => m.messageId)).toEqual([first]);
  });

  it('says so when the summary covers the oldest queued messages only (the scan cap)', async () => {
    // More than the cap (queue/account-queue.ts SUMMARY_SCAN_LIMIT) of queued messages is slow to
    // make here: the answer is stubbed in the page, with the shape GET /queue gives.
    const capped = { results: [], destinationCount: 0, scannedMessages: 2000, preparing: 0, complete: false };
    await rig.page.route('**/queue?*', (route) => route.fulfill({ json: capped }));
    await rig.visit('/queue');
    await rig.page.getByRole('note').getByText('oldest 2,000 queued messages only').waitFor();
    await rig.page.unroute('**/queue?*');
  });

  it('follows an empty partial page (its scan stopped at the cap) to the messages after it', async () => {
    // The first page answers as when 2,000 older queued messages went elsewhere: nothing, X-Page-Partial.
    let asked = 0;
    const api = (url: URL) => url.pathname === '/queue/messages';
    await rig.page.route(api, (route) =>
      asked++ === 0 ? route.fulfill({ json: { results: [], after: 0 }, headers: { 'content-type': 'application/json', 'x-page-partial': 'true' } }) : route.continue(),
    );
    await rig.visit(`/queue/messages?destination=${DEST}`);
    await rig.page.getByRole('link', { name: 'Invoice 1' }).waitFor();
    expect(asked).toBe(2);
    await rig.page.unroute(api);
  });

  it('follows a short partial page that found some messages, as the activity list does, until the end', async () => {
    for (const [to, subject] of [['carl@slow-harbor.net', 'Receipt A'], ['dora@slow-harbor.net', 'Receipt B']]) await waitingAfter(await send(to, subject), 1);
    // The first page answers as when the scan stopped at its cap after one message of DEST: the oldest, X-Page-Partial.
    let asked = 0;
    const api = (url: URL) => url.pathname === '/queue/messages';
    await rig.page.route(api, async (route) => {
      if (asked++ > 0) return route.continue();
      const url = new URL(route.request().url());
      url.searchParams.set('limit', '1');
      const res = await route.fetch({ url: url.toString() });
      await route.fulfill({ response: res, headers: { ...res.headers(), 'x-page-partial': 'true' } });
    });
    try {
      await rig.visit(`/queue/messages?destination=${DEST}`);
      // Both without a click: the short partial page was followed by the one after it, which was the last.
      await rig.page.getByRole('link', { name: 'Receipt A' }).waitFor();
      await rig.page.getByRole('link', { name: 'Receipt B' }).waitFor();
      expect(asked).toBe(2);
      expect(await rig.page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    } finally {
      await rig.page.unroute(api);
    }
  });

  it('shows a message still being composed and signed as preparing, without a due time or Retry', async () => {
    // The finishing stage's pool task waits: the message is committed, its job not due yet.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const pool = rig.t.daemon.pool;
    const finish = pool.finishMany.bind(pool);
    const spy = vi.spyOn(pool, 'finishMany').mockImplementation(async (inputs) => {
      await held;
      return finish(inputs);
    });
    try {
      const res = await rig.t.api('POST', '/send/transactional', {
        headers: { 'x-service-channel-id': live.channelId },
        body: { from: { email: `app@${live.domain}` }, to: [{ email: 'eve@held-mail.net' }], subject: 'Held receipt', text: 'Hello' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await waitFor(() => spy.mock.calls.length > 0, { what: 'the finish task' });

      await rig.visit('/queue');
      await rig.page.getByRole('note').getByText('1 message is being prepared (composed and DKIM-signed)').waitFor();
      await rig.page.getByRole('row', { name: /held-mail\.net/ }).getByText('preparing (composing and signing)').waitFor();
      await rig.checkA11y();

      await rig.page.getByRole('link', { name: 'held-mail.net' }).click();
      const row = rig.page.getByRole('row', { name: /Held receipt/ });
      await row.getByText('preparing (composing and signing)').waitFor();
      expect(await row.getByRole('button', { name: 'Retry Held receipt now' }).count()).toBe(0);
      await row.getByRole('button', { name: 'Drop Held receipt' }).waitFor();
    } finally {
      release();
      spy.mockRestore();
    }
  });
});
