/**
 * The dashboard session's ends in chromium: a session that ends while the user types (here ended
 * on the server, as a sign-out in another tab does; an idle or absolute expiry answers the same
 * session_expired) keeps the page and what was typed, asks to sign in again in a dialog, and the
 * form can then be submitted; a sign-out the daemon never receives says so, and leaves the user
 * signed in, instead of showing the sign-in page over a session that is still valid.
 */
import { expect, it } from 'vitest';
import { useRig } from './harness.js';

const rig = useRig();

/** Ends the browser's session on the server, as signing out in another tab does. */
async function endSessionOnServer(): Promise<void> {
  const cookie = (await rig.context.cookies()).find((c) => c.name === 'postrider_session');
  expect(cookie).toBeDefined();
  const res = await fetch(`${rig.t.url}/dashboard/session`, { method: 'DELETE', headers: { cookie: `postrider_session=${cookie!.value}`, 'x-postrider-dashboard': '1' } });
  expect(res.status).toBe(204);
}

it('keeps a form typed while the session ended: sign in again in a dialog, then submit it', async () => {
  const page = rig.page;
  await rig.visit('/templates/new');
  await page.getByLabel('Name', { exact: true }).fill('Welcome back');
  await page.getByLabel('Subject', { exact: true }).fill('Hello {{name}}');
  await page.getByLabel('Text', { exact: true }).fill('Typed while the session ended.');
  // Typing is done and previewed before the session ends: a preview render refused after it would
  // open the dialog at a time of its own, over the button this test clicks next.
  await page.locator('pre.mail-text', { hasText: 'Typed while the session ended.' }).waitFor();
  await endSessionOnServer();
  // The save (and any render) is refused (401) until the user signs in again.
  rig.expectErrors(/^401 POST .*\/templates(\/render)?$/);
  rig.expectErrors(/preview-html/);
  rig.expectErrors(/^console: Failed to load resource: .* 401/);
  await page.getByRole('button', { name: 'Create template' }).click();

  const dialog = page.getByRole('dialog', { name: 'Your session ended' });
  await dialog.waitFor();
  await rig.checkA11y();
  await rig.screenshot('session-ended');
  // Not now: the page is usable (say to copy the text out); the next refused request asks again.
  await dialog.getByRole('button', { name: 'Not now' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await page.getByRole('button', { name: 'Create template' }).click();
  await dialog.waitFor();
  await dialog.getByLabel('API key').fill(rig.t.apiKey);
  await dialog.getByRole('button', { name: 'Sign in' }).click();
  await dialog.waitFor({ state: 'hidden' });

  // The refusals are outdated now: the form's is cleared, the preview renders again.
  await expect.poll(() => page.getByText('Session expired').count()).toBe(0);
  await page.locator('pre.mail-text', { hasText: 'Typed while the session ended.' }).waitFor();
  expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Welcome back');
  expect(await page.getByRole('textbox', { name: 'Text', exact: true }).inputValue()).toBe('Typed while the session ended.');
  await page.getByRole('button', { name: 'Create template' }).click();
  await page.getByRole('heading', { name: 'Welcome back', level: 1 }).waitFor();
  const list = await rig.t.api('GET', '/templates');
  const made = (list.body.results as { id: string; name: string }[]).find((t) => t.name === 'Welcome back');
  expect(made).toBeDefined();
  expect((await rig.t.api('GET', `/templates/${made!.id}`)).body.version.text).toBe('Typed while the session ended.');
});

it('loads the pages the ended session refused once the user has signed in again', async () => {
  const page = rig.page;
  await rig.t.api('POST', '/channels', { body: { name: 'Receipts' } });
  await rig.visit('/domains');
  rig.expectErrors(/^401 GET /);
  rig.expectErrors(/^console: Failed to load resource: .* 401/);
  const dialog = page.getByRole('dialog', { name: 'Your session ended' });
  const nav = page.getByRole('navigation', { name: 'Main' });
  const signInAgain = async () => {
    await dialog.waitFor();
    await dialog.getByLabel('API key').fill(rig.t.apiKey);
    await dialog.getByRole('button', { name: 'Sign in' }).click();
    await dialog.waitFor({ state: 'hidden' });
  };
  // A page loaded with useApi...
  await endSessionOnServer();
  await nav.getByRole('link', { name: 'Channels' }).click();
  await signInAgain();
  await page.getByRole('cell', { name: 'Receipts' }).waitFor();
  // ...and a list read on a cursor.
  await endSessionOnServer();
  await nav.getByRole('link', { name: 'Activity' }).click();
  await signInAgain();
  await page.getByRole('heading', { name: 'No activity yet' }).waitFor();
  expect(await page.getByText('Session expired').count()).toBe(0);
});

it('says a sign-out the daemon did not receive failed, and stays signed in; a retry signs out', async () => {
  const page = rig.page;
  await rig.visit('/channels');
  await page.route('**/dashboard/session', (route) => (route.request().method() === 'DELETE' ? route.abort('connectionrefused') : route.fallback()));
  rig.expectErrors(/request failed: DELETE .*\/dashboard\/session/);
  rig.expectErrors(/^console: Failed to load resource: net::ERR_CONNECTION_REFUSED/);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('alert').getByText('Not signed out').waitFor();
  expect(await page.getByLabel('API key').count()).toBe(0);
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  await rig.checkA11y();
  await rig.screenshot('sign-out-failed');

  await page.unroute('**/dashboard/session');
  await rig.logout();
  expect(await page.context().cookies()).toEqual([]);
});
