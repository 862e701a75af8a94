/**
 * The Webhooks pages in chromium against a real receiver on loopback: create a webhook through
 * the form (events, channel, a header), send a test event (the receiver gets it, the page shows
 * the status and time), edit it, regenerate the signing key (shown with a copy button), show the
 * last delivery, delete; axe and screenshots of the list and the detail page at both widths.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { useRig } from './harness.js';

let rx: WebhookReceiver;

// Registered before useRig's hooks: the receiver starts before the rig and (after-hooks run in
// reverse order) closes after it stops.
beforeAll(async () => {
  rx = await startWebhookReceiver();
});

afterAll(async () => {
  await rx?.close();
});

const rig = useRig({ daemon: { 'webhooks.allowHttp': true, 'webhooks.allowPrivate': true, 'webhooks.timeoutMs': 2000 } });

describe('dashboard webhooks', () => {
  it('creates a webhook from the form and sends a test event to the receiver', async () => {
    const ch = await rig.t.api('POST', '/channels', { body: { name: 'Orders' } });
    await rig.visit('/webhooks');
    const page = rig.page;
    await page.getByRole('heading', { name: 'No webhooks yet' }).waitFor();
    await page.getByLabel('Endpoint URL').fill(rx.url('/hooks/orders'));
    await page.getByRole('checkbox', { name: 'opened' }).check();
    await page.getByRole('checkbox', { name: 'complained' }).uncheck();
    await page.getByLabel('Channel').selectOption(ch.body.id);
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header 1 name').fill('X-Api-Token');
    await page.getByLabel('Header 1 value').fill('t0ken');
    await rig.checkA11y();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook', exact: true }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const stored = (await rig.t.api('GET', `/webhooks/${id}`)).body;
    expect(stored).toMatchObject({ channelId: ch.body.id, enabled: true, events: ['delivered', 'bounced', 'opened'], additionalHeaders: [{ name: 'X-Api-Token', value: 't0ken' }] });

    await page.getByLabel('Test event type').selectOption('opened');
    await page.getByRole('button', { name: 'Send test event' }).click();
    const outcome = page.getByTestId('test-outcome');
    await outcome.waitFor();
    expect(await outcome.textContent()).toMatch(/^delivered Test opened event: HTTP 200 in \d+ ms$/);
    const [got] = rx.at('/hooks/orders');
    expect(got.json).toMatchObject({ eventType: 'opened', test: true });
    expect(got.headers['x-api-token']).toBe('t0ken');
    await rig.checkA11y();
    await rig.screenshot('webhook');
  });

  it('shows a failing test, edits, regenerates the key, shows the last delivery and deletes', async () => {
    const s = await rig.sender();
    const made = await rig.t.api('POST', '/webhooks', { body: { url: rx.url('/hooks/broken'), events: ['accepted', 'delivered'], channelId: s.channelId } });
    rx.on('/hooks/broken', () => ({ status: 500, body: 'boom' }));
    await rig.visit(`/webhooks/${made.body.id}`);
    const page = rig.page;
    await page.getByText(/None yet: the first event/).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    expect(await page.getByTestId('test-outcome').textContent()).toMatch(/^failed Test accepted event: HTTP 500 in \d+ ms/);

    rig.expectErrors(/^422 PATCH .*\/webhooks\//);
    rig.expectErrors(/status of 422/);
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header 1 name').fill('Bad Header');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const headerName = page.getByLabel('Header 1 name');
    await expect.poll(() => headerName.getAttribute('aria-invalid')).toBe('true');
    const errorId = (await headerName.getAttribute('aria-describedby'))!.split(' ').pop();
    expect(await page.locator(`[id="${errorId}"]`).textContent()).not.toBe('');
    await page.getByRole('button', { name: 'Remove header 1' }).click();
    await page.getByRole('checkbox', { name: 'Enabled' }).uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await rig.t.api('GET', `/webhooks/${made.body.id}`)).body.enabled).toBe(false);

    await page.getByRole('button', { name: 'Regenerate signing key' }).click();
    await page.getByRole('dialog', { name: 'Regenerate the signing key?' }).getByRole('button', { name: 'Regenerate' }).click();
    const fresh = await page.getByTestId('new-signing-key').textContent();
    expect(fresh).not.toBe(made.body.payloadSigningKey);
    expect(fresh).toBe((await rig.t.api('GET', `/webhooks/${made.body.id}`)).body.payloadSigningKey);
    await page.getByRole('button', { name: /^Copy key/ }).click();
    await page.getByText('Copied').waitFor();

    // A real delivery: enabled again, one send; lastDelivery shows its event and status.
    rx.on('/hooks/broken', () => ({ status: 204 }));
    await rig.t.api('PATCH', `/webhooks/${made.body.id}`, { body: { enabled: true } });
    await rig.t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': s.channelId },
      body: { from: { email: `app@${s.domain}` }, to: [{ email: 'reader@inbox-demo.net' }], subject: 'hi', text: 'hi' },
    });
    await waitFor(async () => (await rig.t.api('GET', `/webhooks/${made.body.id}`)).body.lastDelivery !== null, { what: 'a webhook delivery' });
    await rig.visit('/webhooks');
    await page.getByRole('cell', { name: /204/ }).waitFor();
    await rig.checkA11y();
    await rig.screenshot('webhooks');
    await page.getByRole('link', { name: rx.url('/hooks/broken') }).click();
    await page.getByText(/, HTTP 204|: HTTP 204/).waitFor();

    await page.getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByRole('dialog', { name: 'Delete this webhook?' }).getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    expect((await rig.t.api('GET', `/webhooks/${made.body.id}`)).status).toBe(404);
  });
});
