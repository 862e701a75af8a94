/**
 * The API keys page in chromium: the account's keys (the session's own marked), a key created
 * from the form with its secret shown once beside a Copy button (and gone after), a channel key
 * whose SMTP user name is `api`, the SMTP settings to copy (the daemon's name, not its wildcard
 * bind address; the bound port; a channel id as user name), a key revoked after a confirmation
 * (refused from then on), and the session's own key revoked: the dashboard signs out and says
 * why, with no failed request. axe and screenshots.
 */
import { describe, expect, it } from 'vitest';
import { useRig } from './harness.js';

let channelId = '';

const rig = useRig({
  daemon: { 'smtp.enabled': true, 'smtp.host': '0.0.0.0', 'smtp.port': 0, hostname: 'mta.shop-demo.net' },
  prepare: async (r) => {
    await r.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: r.t.url });
    channelId = (await r.t.api('POST', '/channels', { body: { name: 'Receipts', deliveryType: 'sandbox' } })).body.id;
  },
});

const table = () => rig.page.getByRole('region', { name: 'API keys' });
const row = (name: string) => table().locator('tbody tr').filter({ has: rig.page.getByRole('cell', { name, exact: false }) });

describe('API keys page', () => {
  let accountKey = '';

  it('lists the keys, creates one and shows its secret once, with a Copy button', async () => {
    const page = rig.page;
    await rig.visit('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await row('initial').getByText('this session').waitFor();
    await page.getByLabel('Name (optional)').fill('shop backend');
    await page.getByRole('button', { name: 'Create key' }).click();
    const status = page.getByRole('status').filter({ hasText: 'it is not shown again' });
    await status.waitFor();
    accountKey = (await page.getByTestId('new-api-key').textContent())!.trim();
    expect(accountKey).toMatch(/^\S{20,}$/);
    await status.getByRole('button', { name: /^Copy key/ }).click();
    await status.getByRole('button', { name: /^Copied/ }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(accountKey);
    // The key works, and the list shows it by name and its first characters only.
    expect((await rig.t.api('GET', '/channels', { key: accountKey })).status).toBe(200);
    await row('shop backend').getByText('the whole account').waitFor();
    expect(await table().textContent()).not.toContain(accountKey);
    await rig.checkA11y();
    await rig.screenshot('api-keys-created');
    await status.getByRole('button', { name: 'I have copied it' }).click();
    await expect.poll(() => page.getByTestId('new-api-key').count()).toBe(0);
    await page.reload();
    await row('shop backend').waitFor();
    expect(await page.content()).not.toContain(accountKey);
  });

  it('creates a channel key, whose SMTP user name is api', async () => {
    const page = rig.page;
    await page.getByLabel('Name (optional)').fill('receipts worker');
    await page.getByLabel('Acts on').selectOption(channelId);
    await page.getByRole('button', { name: 'Create key' }).click();
    const status = page.getByRole('status').filter({ hasText: 'it is not shown again' });
    await status.getByText('it is the key of channel Receipts').waitFor();
    const key = (await page.getByTestId('new-api-key').textContent())!.trim();
    expect((await rig.t.api('GET', `/channels/${channelId}`, { key })).status).toBe(200);
    await row('receipts worker').getByText('channel Receipts').waitFor();
    expect(await row('receipts worker').locator('code', { hasText: /^api$/ }).count()).toBe(1);
  });

  it('shows the SMTP settings to copy: the name clients use, the bound port, a channel id as user name', async () => {
    const page = rig.page;
    const smtp = page.locator('section', { has: page.getByRole('heading', { name: 'SMTP settings' }) });
    await smtp.locator('dd code', { hasText: /^mta\.shop-demo\.net$/ }).waitFor();
    const port = (rig.t.daemon as unknown as { smtp: { port: number } }).smtp.port;
    expect(port).toBeGreaterThan(0);
    await smtp.locator('dd code', { hasText: new RegExp(`^${port}$`) }).waitFor();
    expect(await smtp.textContent()).not.toContain('0.0.0.0');
    await smtp.getByText('off (smtp.implicitTlsPort)').waitFor();
    expect(await page.getByTestId('smtp-user').textContent()).toBe(channelId);
    await smtp.getByRole('button', { name: /^Copy user name:/ }).click();
    await smtp.getByRole('button', { name: /^Copied/ }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(channelId);
    await smtp.getByText('The TLS certificate is self-signed').waitFor();
    // On a phone the page does not scroll sideways (the keys table scrolls in its own box).
    await page.setViewportSize({ width: 360, height: 800 });
    await expect.poll(() => page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await page.setViewportSize({ width: 1280, height: 800 });
    await rig.checkA11y();
    await rig.screenshot('api-keys');
  });

  it('revokes a key after a confirmation, and the key is refused from then on', async () => {
    const page = rig.page;
    await row('shop backend').getByRole('button', { name: 'Revoke shop backend' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke the key shop backend?' });
    await dialog.getByText('This cannot be undone').waitFor();
    expect(await dialog.getByText('This is the key you signed in with').count()).toBe(0);
    await rig.checkA11y();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await expect.poll(() => row('shop backend').count()).toBe(0);
    expect((await rig.t.api('GET', '/channels', { key: accountKey })).status).toBe(401);
  });

  it("signs out and says why when the session's own key is revoked, with no failed request", async () => {
    const page = rig.page;
    await row('initial').getByRole('button', { name: 'Revoke initial' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke the key initial?' });
    await dialog.getByText('This is the key you signed in with').waitFor();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('status').getByText('You revoked the API key this session was signed in with').waitFor();
    await page.getByLabel('API key').waitFor();
    await rig.checkA11y();
    await rig.screenshot('api-keys-signed-out');
  });
});
