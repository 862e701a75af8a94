/**
 * The message page in chromium: a message delivered to a test MX (summary, events, the
 * delivery attempt with its MX, SMTP reply and TLS, the header fields) and a message's HTML in
 * the sandboxed iframe: shown with its inline styles, its script never run, its remote image
 * not requested until "Load remote images" is clicked; axe and screenshots.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { SCREENSHOT_DIR, useRig } from './harness.js';
import { sendMail, startPixelServer, type PixelServer } from './mail-fixtures.js';

const RCPT_DOMAIN = 'harbor-post.org';
const MX_ADDRESS = '127.0.31.2';

let mx: MxServer;
let pixels: PixelServer;
let sandbox: Sender;
let live: Sender;

// Registered before useRig's hooks: the servers start before the rig and (after-hooks run in
// reverse order) close after it stops.
beforeAll(async () => {
  pixels = await startPixelServer();
  mx = await startMxServer({ address: MX_ADDRESS });
});

afterAll(async () => {
  await mx?.close();
  await pixels?.close();
});

const rig = useRig({
  daemon: () => ({ 'delivery.enabled': true, 'delivery.port': mx.port, 'delivery.allowPrivate': true }),
  prepare: async (r) => {
    r.dns.set(RCPT_DOMAIN, 'MX', [{ priority: 10, exchange: `mx.${RCPT_DOMAIN}` }]);
    r.dns.set(`mx.${RCPT_DOMAIN}`, 'A', [MX_ADDRESS]);
    sandbox = await r.sender();
    live = await setupSender(r.t, r.dns, { deliveryType: 'live' });
  },
});

describe('message page', () => {
  it('shows a delivered message: summary, events, the delivery attempt with MX, reply and TLS, and its header fields', async () => {
    const id = await sendMail(rig, live, { to: [{ email: `ann@${RCPT_DOMAIN}`, name: 'Ann' }], subject: 'Your receipt', html: '<p>Thanks!</p>', text: 'Thanks!' });
    await waitFor(async () => (await rig.t.api('GET', `/activity/messages/${id}`)).body.events.some((e: { eventType: string }) => e.eventType === 'delivered'), {
      what: 'the delivery to the test MX',
      timeout: 15_000,
    });
    const page = rig.page;
    await rig.visit(`/messages/${id}`);
    await page.getByRole('heading', { level: 1, name: 'Your receipt' }).waitFor();
    const summary = page.locator('.summary').first();
    await summary.getByText(`Demo App <app@${live.domain}>`, { exact: true }).waitFor();
    await summary.getByText(`Ann <ann@${RCPT_DOMAIN}>`, { exact: true }).waitFor();
    const events = page.getByRole('region', { name: 'Events' });
    for (const type of ['accepted', 'processed', 'delivered']) await events.getByText(type, { exact: true }).first().waitFor();
    const attempts = page.getByRole('region', { name: 'Delivery attempts' });
    await attempts.getByText(`mx.${RCPT_DOMAIN}`).waitFor();
    expect(await attempts.locator('code').first().textContent()).toMatch(/^250 /);
    // The test MX has a self-signed certificate: encrypted, not verified (RFC 7435 opportunistic TLS).
    await attempts.getByText(/TLSv1\.[23] .*certificate not verified/).waitFor();
    const headers = page.getByRole('region', { name: 'Header fields' });
    await headers.getByRole('rowheader', { name: 'DKIM-Signature' }).waitFor();
    await headers.getByRole('rowheader', { name: 'Subject' }).waitFor();
    await rig.checkA11y();
    await rig.screenshot('message');
  });

  it('renders the HTML in a sandboxed iframe: inline styles apply, scripts never run, remote images wait for the click', async () => {
    // The frame blocks the script and (until the click) the remote image on purpose: chromium says so on the console.
    rig.expectErrors(/Blocked script execution in 'http:\/\/127\.0\.0\.1:\d+\/dashboard\/messages\/[0-9a-f-]+\/html(\?images=1)?' because the document's frame is sandboxed/);
    rig.expectErrors(/violates the following Content Security Policy directive: "img-src data: cid:"/);
    rig.expectErrors(/^request failed: GET http:\/\/127\.0\.0\.1:\d+\/pixel\.png csp/);
    const html =
      '<html><body><p id="greeting" style="color: rgb(200, 0, 0); font-size: 24px">Hello from the mail</p>' +
      `<img id="remote" src="${pixels.base}/pixel.png" alt="remote pixel">` +
      `<script>document.body.setAttribute('data-ran', 'yes'); new Image().src = '${pixels.base}/script-ran';</script></body></html>`;
    const id = await sendMail(rig, sandbox, { subject: 'Styled mail', html, text: 'Hello from the mail' });
    const page = rig.page;
    await rig.visit(`/messages/${id}`);
    const iframe = page.locator('iframe.mail-frame');
    expect(await iframe.getAttribute('sandbox')).toBe('');
    expect(await iframe.getAttribute('referrerpolicy')).toBe('no-referrer');
    const frame = page.frameLocator('iframe.mail-frame');
    await frame.locator('#greeting').getByText('Hello from the mail').waitFor();
    // Run by the test through the DevTools protocol, not by the page (the tests have no DOM types).
    const color = (el: unknown) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color;
    expect(await frame.locator('#greeting').evaluate(color)).toBe('rgb(200, 0, 0)');
    expect(await frame.locator('body[data-ran]').count()).toBe(0);
    expect(pixels.hits).toEqual([]);
    await rig.checkA11y();
    // Chromium leaves the sandboxed (out-of-process) frame blank in full-page shots: the frame on its own.
    await iframe.screenshot({ path: path.join(SCREENSHOT_DIR, 'message-html-frame.png') });
    await rig.screenshot('message-html');
    await page.getByRole('button', { name: 'Load remote images' }).click();
    await page.getByText('Remote images are loaded').waitFor();
    await waitFor(() => pixels.hits.includes('/pixel.png'), { what: 'the remote image requested after the click' });
    await frame.locator('#greeting').waitFor();
    expect(await frame.locator('body[data-ran]').count()).toBe(0);
    expect(pixels.hits).not.toContain('/script-ran');
  });

  it('says so when the message does not exist', async () => {
    rig.expectErrors(/404 GET .*\/activity\/messages\//);
    rig.expectErrors(/status of 404/);
    await rig.visit('/messages/00000000-0000-4000-8000-000000000000');
    await rig.page.getByRole('alert').getByText('does not exist').waitFor();
  });
});
