/**
 * The dashboard's shell in chromium: login through the form, the Overview's totals and daily
 * chart after sends, every navigation entry reachable, logout; axe and screenshots on each page.
 */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { useRig } from './harness.js';

const rig = useRig({ login: false });

describe('dashboard shell', () => {
  it('shows the login page without a session, accessible at both widths', async () => {
    await rig.visit('/');
    await expect(rig.page.getByRole('heading', { name: 'postrider' }).isVisible()).resolves.toBe(true);
    await rig.checkA11y();
    await rig.screenshot('login');
  });

  it('logs in with the account key and shows the Overview with the sends in its totals and chart', async () => {
    const s = await rig.sender();
    for (let i = 0; i < 3; i++) {
      const r = await rig.t.api('POST', '/send/transactional', {
        headers: { 'x-service-channel-id': s.channelId },
        body: { from: { email: `app@${s.domain}` }, to: [{ email: `reader${i}@inbox-demo.net` }], subject: `hello ${i}`, text: 'hi' },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    await waitFor(async () => (await rig.t.api('GET', '/statistics/totals')).body.transactional.sent >= 3, { what: 'three sends counted' });
    await rig.login();
    const page = rig.page;
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const sent = page.locator('.tile', { hasText: 'sent' }).locator('dd');
    await expect.poll(() => sent.textContent()).toBe('3');
    await page.locator('.chart canvas').first().waitFor();
    expect(await page.getByTestId('chart-empty').count()).toBe(0);
    expect(await page.locator('.u-legend').textContent()).toContain('delivered');
    await rig.checkA11y();
    await rig.screenshot('overview');
  });

  it('narrows the Overview to one channel', async () => {
    const other = await rig.sender();
    await rig.visit('/');
    const page = rig.page;
    await page.getByLabel('Channel').selectOption(other.channelId);
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('.tile', { hasText: 'sent' }).locator('dd').textContent()).toBe('0');
    await page.getByTestId('chart-empty').waitFor();
  });

  it('reaches every page of the navigation, by keyboard too', async () => {
    const page = rig.page;
    const nav = page.getByRole('navigation', { name: 'Main' });
    const labels = await nav.getByRole('link').allTextContents();
    expect(labels).toEqual(['Overview', 'Activity', 'Channels', 'Domains', 'Webhooks', 'Inbound', 'Templates', 'Suppressions', 'Broadcasts', 'Sandbox inbox', 'Queue', 'Sources', 'API keys']);
    await nav.getByRole('link', { name: 'Channels' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Channels' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/channels');
    expect(await nav.getByRole('link', { name: 'Channels' }).getAttribute('aria-current')).toBe('page');
    // A reload of a page path is answered by the app (SPA fallback), still signed in.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Channels' }).waitFor();
  });

  it('opens the menu on a 360 px screen', async () => {
    const page = rig.page;
    await page.setViewportSize({ width: 360, height: 800 });
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('logs out: the login page returns and the API refuses the old cookie', async () => {
    const cookies = await rig.context.cookies();
    const session = cookies.find((c) => c.name === 'postrider_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    await rig.logout();
    const res = await fetch(`${rig.t.url}/channels`, { headers: { cookie: `postrider_session=${session.value}`, 'x-postrider-dashboard': '1' } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('session_expired');
    await rig.visit('/channels');
    await rig.page.getByLabel('API key').waitFor();
  });
});
