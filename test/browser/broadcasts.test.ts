/**
 * The Broadcasts pages in chromium: the list of a channel, a broadcast's page with its progress
 * (bar and text), counts, failures and suppressed recipients, refreshed while it runs; cancel
 * through the dialog; the send form (a field error beside the field, then a broadcast sent).
 * The daemon's delivery is off (harness), so a live channel's messages stay queued and its
 * broadcast keeps running until canceled; a sandbox channel's broadcast completes.
 */
import { describe, expect, it } from 'vitest';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { useRig } from './harness.js';

let live: Sender;

const rig = useRig({
  prepare: async (r) => {
    live = await setupSender(r.t, r.dns, { deliveryType: 'live' });
  },
});

async function broadcast(s: Sender, subject: string, to: string[], scheduledAt?: string): Promise<string> {
  const res = await rig.t.api('POST', '/send/broadcast', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `news@${s.domain}` }, template: { subject, text: 'Hello' }, messages: to.map((email) => ({ to: [{ email }] })), ...(scheduledAt && { scheduledAt }) },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.broadcastId;
}

describe('broadcasts pages', () => {
  it('says how to send one when the channel has none', async () => {
    await rig.visit('/broadcasts');
    await rig.page.getByRole('heading', { name: 'No broadcasts on this channel' }).waitFor();
    await rig.checkA11y();
    await rig.screenshot('broadcasts-empty');
  });

  it('shows a running broadcast: progress, counts, failures and suppressed recipients, then cancels it', async () => {
    const suppressed = ['gone1@grove-mail.net', 'gone2@grove-mail.net'];
    const add = await rig.t.api('POST', '/suppressions', { body: { channelId: live.channelId, mailType: 'broadcast', emails: suppressed } });
    expect(add.status).toBe(200);
    const to = ['ann@grove-mail.net', 'bob@harbor-post.org', 'cid@isle-mail.net', ...suppressed];
    const id = await broadcast(live, 'Autumn news', to);
    await waitFor(async () => (await rig.t.api('GET', `/broadcasts/${id}`)).body.suppressed === 2, { what: 'the broadcast expanded' });

    await rig.visit('/broadcasts');
    const page = rig.page;
    await page.getByRole('link', { name: 'Autumn news' }).click();
    await page.getByRole('heading', { level: 1, name: 'Autumn news' }).waitFor();
    await page.getByText('refreshes every').waitFor();
    expect(await page.locator('#broadcast-progress').getAttribute('max')).toBe('100');
    await page.getByText('of 5 messages handled').waitFor();
    await expect.poll(() => page.locator('.tile', { hasText: 'suppressed' }).locator('dd').textContent()).toBe('2');
    const suppressedList = page.getByRole('region', { name: 'Suppressed recipients' });
    await suppressedList.getByRole('cell', { name: 'gone1@grove-mail.net', exact: true }).waitFor();
    await suppressedList.getByRole('cell', { name: 'gone2@grove-mail.net', exact: true }).waitFor();
    await page.getByRole('heading', { name: /^Failures/ }).waitFor();
    const content = page.locator('section', { has: page.getByRole('heading', { name: 'Content' }) });
    await content.getByText(`news@${live.domain}`, { exact: true }).waitFor();
    await content.getByText('links off, opens off').waitFor();
    await rig.checkA11y();
    await rig.screenshot('broadcast-running');

    await page.getByRole('button', { name: 'Cancel broadcast' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this broadcast?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel broadcast' }).click();
    await page.locator('.badge', { hasText: 'canceled' }).first().waitFor();
    expect(await page.getByRole('button', { name: 'Cancel broadcast' }).count()).toBe(0);
    expect((await rig.t.api('GET', `/broadcasts/${id}`)).body.status).toBe('canceled');
  });

  it('keeps refreshing a running broadcast after a refresh failed', async () => {
    const id = await broadcast(live, 'Refresh news', ['dee@grove-mail.net']);
    const page = rig.page;
    await rig.visit(`/broadcasts/${id}`);
    await page.getByRole('heading', { level: 1, name: 'Refresh news' }).waitFor();
    await page.getByText('refreshes every').waitFor();
    // The next refresh does not reach the daemon (as while it restarts); the one after it does.
    let failed!: () => void;
    const refreshFailed = new Promise<void>((resolve) => (failed = resolve));
    await page.route(
      (url) => url.pathname === `/broadcasts/${id}`,
      async (route) => {
        await route.abort('connectionrefused');
        failed();
      },
      { times: 1 },
    );
    rig.expectErrors(/request failed: GET .*\/broadcasts\//);
    rig.expectErrors(/^console: Failed to load resource: net::ERR_CONNECTION_REFUSED/);
    await refreshFailed;
    expect((await rig.t.api('POST', `/broadcasts/${id}/cancel`)).status).toBe(200);
    await page.locator('.badge', { hasText: 'canceled' }).first().waitFor();
  });

  it('shows a scheduled broadcast with its time, filtered by status scheduled, and cancels it before the time', async () => {
    const id = await broadcast(live, 'Winter preview', ['dee@grove-mail.net'], new Date(Date.now() + 2 * 86_400_000).toISOString());
    await rig.visit('/broadcasts');
    const page = rig.page;
    await page.getByLabel('Status').selectOption('scheduled');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('link', { name: 'Winter preview' }).click();
    await page.getByRole('heading', { level: 1, name: 'Winter preview' }).waitFor();
    await page.locator('.badge', { hasText: 'scheduled' }).first().waitFor();
    await page.getByText(/sends in 2 days/).waitFor();
    await rig.checkA11y();
    await rig.screenshot('broadcast-scheduled');
    await page.getByRole('button', { name: 'Cancel broadcast' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this broadcast?' });
    await dialog.getByRole('button', { name: 'Cancel broadcast' }).click();
    await page.locator('.badge', { hasText: 'canceled' }).first().waitFor();
    expect((await rig.t.api('GET', `/broadcasts/${id}`)).body.status).toBe('canceled');
  });

  it('lists the failures of entries that became no message', async () => {
    // An entry whose every recipient is suppressed becomes a failure row, not a message.
    const id = await broadcast(live, 'All gone', ['gone1@grove-mail.net', 'ann@grove-mail.net']);
    const failures = await waitFor(async () => {
      const r = (await rig.t.api('GET', `/broadcasts/${id}/failures`)).body;
      if (r.totalCount < 1) throw new Error('no failure yet');
      return r;
    }, { what: 'a failure row' });
    await rig.visit(`/broadcasts/${id}`);
    const table = rig.page.getByRole('region', { name: 'Failed entries' });
    await table.getByText(failures.results[0].errorCode, { exact: true }).waitFor();
    await table.getByText('gone1@grove-mail.net').waitFor();
  });

  it('shows a completed sandbox broadcast at 100% in the list, filtered by status', async () => {
    const sandbox = await rig.sender();
    const id = await broadcast(sandbox, 'Sandbox digest', ['ann@grove-mail.net', 'bob@harbor-post.org']);
    await waitFor(async () => (await rig.t.api('GET', `/broadcasts/${id}`)).body.status === 'completed', { what: 'the sandbox broadcast completed' });
    await rig.visit('/broadcasts');
    const page = rig.page;
    await page.getByLabel('Channel').first().selectOption(sandbox.channelId);
    await page.getByLabel('Status').selectOption('completed');
    await page.getByRole('button', { name: 'Apply' }).click();
    const row = page.getByRole('row', { name: /Sandbox digest/ });
    await row.waitFor();
    expect(await row.getByRole('cell', { name: '100%' }).count()).toBe(1);
    await rig.screenshot('broadcasts');
  });

  it('sends a broadcast from the form, with a field error first', async () => {
    rig.expectErrors(/422/);
    await rig.visit('/broadcasts');
    const page = rig.page;
    const form = page.locator('form', { has: page.getByRole('button', { name: 'Send broadcast' }) });
    await form.getByLabel('Channel').selectOption(live.channelId);
    await form.getByLabel('From address').fill('news@not-linked-domain.net');
    await form.getByLabel('Subject').fill('From the form');
    await form.getByLabel('Text', { exact: true }).fill('Hello from the dashboard');
    await form.getByLabel('Recipients').fill('dee@grove-mail.net\neve@harbor-post.org');
    await form.getByRole('button', { name: 'Send broadcast' }).click();
    await form.locator('.field-invalid', { has: page.getByLabel('From address') }).locator('.field-error').waitFor();
    await rig.checkA11y();
    await form.getByLabel('From address').fill(`news@${live.domain}`);
    await form.getByRole('button', { name: 'Send broadcast' }).click();
    await page.getByRole('heading', { level: 1, name: 'From the form' }).waitFor();
    await page.getByText('of 2 messages handled').waitFor();
  });
});
