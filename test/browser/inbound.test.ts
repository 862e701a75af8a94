/**
 * The Inbound pages (issue 33) in chromium against a real daemon with its inbound listener on
 * loopback and a real receiver for the POSTs: create a route through the form (and a refused
 * one, its error beside the field), see its domain's MX record go from not checked to found,
 * send a real message over SMTP to the listener, find it in the list, open it and read its
 * verdicts and POSTs, download it as received; a receiver that fails makes a message `failed`,
 * Retry POSTs it again (and a Retry the API already did shows the 409's text); edit, regenerate
 * the signing key and delete a route. axe, screenshots at 360 and 1,280 px and no sideways
 * scroll at 360 px on every page.
 */
import fs from 'node:fs';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish, type DnsRecordJson, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { useRig } from './harness.js';

let rx: WebhookReceiver;

// Registered before useRig's hooks: the receiver starts before the rig and closes after it stops.
beforeAll(async () => {
  rx = await startWebhookReceiver();
});

afterAll(async () => {
  await rx?.close();
});

const rig = useRig({
  daemon: {
    'inbound.enabled': true,
    'inbound.port': 0,
    'webhooks.allowHttp': true,
    'webhooks.allowPrivate': true,
    // A receiver that answers 500 makes its message `failed` within seconds, not 24 h.
    'webhooks.retryBaseMs': 50,
    'inbound.postMaxAgeMs': 1500,
  },
  prepare: async (r) => {
    // SPF and DMARC of the sender's domain, so the verdicts have something to say.
    r.dns.set('example.org', 'TXT', ['v=spf1 ip4:127.0.0.1 -all']);
    r.dns.set('_dmarc.example.org', 'TXT', ['v=DMARC1; p=reject']);
  },
});

let s: Sender;

/** A message over SMTP to the daemon's inbound listener, as a sending MTA delivers it. */
async function sendMail(to: string, subject: string): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: rig.t.daemon.inbound!.port, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({ envelope: { from: 'ann@example.org', to: [to] }, from: 'Ann <ann@example.org>', to, subject, text: 'Wo bleibt meine Bestellung?' });
  } finally {
    transport.close();
  }
}

/** The messages of a route once one has `status`, as the API lists them. */
function listed(routeId: string, status: string, n = 1): Promise<Array<{ id: string; subject: string }>> {
  return waitFor(
    async () => {
      const res = await rig.t.api('GET', `/inbound/messages?routeId=${routeId}&status=${status}`);
      return res.body.results.length >= n ? res.body.results : undefined;
    },
    { what: `${n} ${status} message(s) of route ${routeId}`, timeout: 20_000 },
  );
}

/** The page fits 360 px without a sideways scroll (tables scroll in their own box). */
async function fitsPhone(): Promise<void> {
  const page = rig.page;
  await page.setViewportSize({ width: 360, height: 800 });
  await expect.poll(() => page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function checkPage(name: string): Promise<void> {
  await rig.checkA11y();
  await fitsPhone();
  await rig.screenshot(name);
}

describe('dashboard inbound', () => {
  beforeAll(async () => {
    s = await rig.sender({ verified: true });
  });

  it('creates a route from the form, shows its MX record found, and a message sent to it with its verdicts and POST', async () => {
    const page = rig.page;
    await rig.visit('/inbound');
    await page.getByRole('heading', { name: 'No inbound routes yet' }).waitFor();

    rig.expectErrors(/^422 POST .*\/inbound\/routes$/);
    rig.expectErrors(/status of 422/);
    await page.getByLabel('Address').fill('support@not-ours.example.net');
    await page.getByLabel('Endpoint URL').fill(rx.url('/in/support'));
    await page.getByRole('button', { name: 'Create route' }).click();
    const address = page.getByLabel('Address');
    await expect.poll(() => address.getAttribute('aria-invalid')).toBe('true');
    await checkPage('inbound');

    await address.fill(`support@${s.domain}`);
    await page.getByLabel('Channel').selectOption(s.channelId);
    await page.getByRole('button', { name: 'Create route' }).click();
    await page.getByRole('heading', { level: 1, name: `support@${s.domain}` }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    expect((await rig.t.api('GET', `/inbound/routes/${id}`)).body).toMatchObject({ channelId: s.channelId, url: rx.url('/in/support'), enabled: true });

    // The domain's MX: not looked up yet; published, then Check DNS now finds it.
    const mx = page.getByRole('region', { name: 'MX record' });
    await mx.getByText('not yet').waitFor();
    const record: DnsRecordJson = (await rig.t.api('GET', `/domains/${s.domainId}`)).body.dnsRecords.inbound;
    expect(await mx.locator('code', { hasText: record.value }).count()).toBe(1);
    publish(rig.dns, record);
    await mx.getByRole('button', { name: 'Check DNS now' }).click();
    await mx.getByText('found', { exact: true }).waitFor();
    await checkPage('inbound-route');

    await rig.visit('/inbound');
    const row = page.getByRole('row', { name: new RegExp(`support@${s.domain}`) });
    await row.getByText('found', { exact: true }).waitFor();
    expect(await row.getByRole('link', { name: s.domain, exact: true }).count()).toBe(1);
    await checkPage('inbound-routes');

    await sendMail(`support+4711@${s.domain}`, 'Wo ist mein Paket?');
    const [m] = await listed(id, 'posted');
    await page.getByRole('link', { name: 'Messages', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Inbound messages' }).waitFor();
    const listRow = page.getByRole('row', { name: /Wo ist mein Paket\?/ });
    await listRow.getByText('posted').waitFor();
    expect(await listRow.getByText(`support+4711@${s.domain}`).count()).toBe(1);
    await checkPage('inbound-messages');

    await listRow.getByRole('link', { name: 'Wo ist mein Paket?' }).click();
    await page.getByRole('heading', { level: 1, name: 'Wo ist mein Paket?' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/inbound/messages/${m.id}`);
    const auth = page.getByRole('region', { name: 'Authentication' });
    await auth.getByText('pass the sending server may send mail for example.org').waitFor();
    expect(await auth.getByText('the message carries no DKIM signature').count()).toBe(1);
    expect(await auth.getByText(/pass the From domain example\.org is confirmed by a passing SPF or DKIM result of its own; its policy asks to reject it when this fails/).count()).toBe(1);
    expect(await auth.getByText('no ARC chain: no forwarder sealed it').count()).toBe(1);
    expect(await page.getByRole('region', { name: 'POSTs to your app' }).getByText(/HTTP 200/).count()).toBe(1);
    expect(await page.getByText('4711', { exact: true }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Retry' }).count()).toBe(0);
    expect(rx.at('/in/support')[0].json).toMatchObject({ id: m.id, subject: 'Wo ist mein Paket?', mailboxHash: '4711' });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download raw message (.eml)' }).click()]);
    expect(download.suggestedFilename()).toBe(`${m.id}.eml`);
    expect(fs.readFileSync(await download.path(), 'utf8')).toMatch(/^Subject: Wo ist mein Paket\?\r$/m);
    await checkPage('inbound-message');
  });

  it('shows a message its receiver failed, retries it to posted, and shows the 409 of a message retried meanwhile', async () => {
    let down = true;
    rx.on('/in/orders', () => (down ? { status: 500, body: 'down' } : { status: 200 }));
    const route = (await rig.t.api('POST', '/inbound/routes', { body: { channelId: s.channelId, address: `orders@${s.domain}`, url: rx.url('/in/orders') } })).body;
    await sendMail(`orders@${s.domain}`, 'Erste Bestellung');
    await sendMail(`orders@${s.domain}`, 'Zweite Bestellung');
    await listed(route.id, 'failed', 2);

    const page = rig.page;
    await rig.visit('/inbound/messages');
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => page.getByRole('row', { name: /Wo ist mein Paket/ }).count()).toBe(0);
    await page.getByRole('row', { name: /Erste Bestellung/ }).waitFor();

    await page.getByRole('link', { name: 'Erste Bestellung' }).click();
    await page.getByRole('heading', { level: 1, name: 'Erste Bestellung' }).waitFor();
    const posts = page.getByRole('region', { name: 'POSTs to your app' });
    expect(await posts.getByText(/HTTP 500/).count()).toBeGreaterThan(0);
    await checkPage('inbound-message-failed');
    down = false;
    await page.getByRole('button', { name: 'Retry' }).click();
    // Refreshed while `received`, until the new POST is answered.
    await page.locator('.summary').getByText('posted', { exact: true }).waitFor({ timeout: 15_000 });
    await posts.getByText(/HTTP 200/).waitFor();

    // Retried through the API while the page still shows it failed: the 409 problem, then what it is now.
    rig.expectErrors(/^409 POST .*\/retry$/);
    rig.expectErrors(/status of 409/);
    await rig.visit('/inbound/messages?status=failed');
    await page.getByRole('link', { name: 'Zweite Bestellung' }).click();
    await page.getByRole('heading', { level: 1, name: 'Zweite Bestellung' }).waitFor();
    const second = new URL(page.url()).pathname.split('/').pop()!;
    expect((await rig.t.api('POST', `/inbound/messages/${second}/retry`)).status).toBe(200);
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByRole('alert').getByText(/cannot be retried/).waitFor();
    await page.locator('.summary').getByText('posted', { exact: true }).waitFor({ timeout: 15_000 });
  });

  it('edits a route, regenerates its signing key and deletes it after a confirmation', async () => {
    const route = (await rig.t.api('POST', '/inbound/routes', { body: { channelId: s.channelId, address: `*@${s.domain}`, url: rx.url('/in/all') } })).body;
    const page = rig.page;
    await rig.visit(`/inbound/routes/${route.id}`);
    await page.getByRole('heading', { level: 1, name: `*@${s.domain}` }).waitFor();
    await page.getByRole('checkbox', { name: /Enabled/ }).uncheck();
    await page.getByLabel('Endpoint URL').fill(rx.url('/in/all-2'));
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await rig.t.api('GET', `/inbound/routes/${route.id}`)).body).toMatchObject({ enabled: false, url: rx.url('/in/all-2') });

    await page.getByRole('button', { name: 'Regenerate signing key' }).click();
    await page.getByRole('dialog', { name: 'Regenerate the signing key?' }).getByRole('button', { name: 'Regenerate' }).click();
    const fresh = await page.getByTestId('new-signing-key').textContent();
    expect(fresh).not.toBe(route.payloadSigningKey);
    expect(fresh).toBe((await rig.t.api('GET', `/inbound/routes/${route.id}`)).body.payloadSigningKey);
    await page.getByRole('button', { name: /^Copy key/ }).click();
    await page.getByText('Copied').waitFor();

    await page.getByRole('button', { name: 'Delete route' }).click();
    await page.getByRole('dialog', { name: 'Delete this route?' }).getByRole('button', { name: 'Delete route' }).click();
    await page.getByRole('heading', { level: 1, name: 'Inbound' }).waitFor();
    expect((await rig.t.api('GET', `/inbound/routes/${route.id}`)).status).toBe(404);
    expect(await page.getByRole('link', { name: `*@${s.domain}` }).count()).toBe(0);
  });
});
