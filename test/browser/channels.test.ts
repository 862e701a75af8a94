/**
 * The Channels pages in chromium: create a channel through the form, edit it, a 422 field error
 * shown beside its field, the linked domains, delete through the confirmation dialog; axe and
 * screenshots of the list and the detail page at both widths.
 */
import { describe, expect, it } from 'vitest';
import { useRig } from './harness.js';

const rig = useRig();

describe('dashboard channels', () => {
  it('shows an empty state that says what to do, then creates a channel from the form', async () => {
    await rig.visit('/channels');
    const page = rig.page;
    await page.getByRole('heading', { name: 'No channels yet' }).waitFor();
    await rig.checkA11y();
    await page.getByLabel('Name').fill('Receipts');
    await page.getByRole('radio', { name: /Live:/ }).check();
    await page.getByRole('checkbox', { name: /Track opens/ }).check();
    await page.getByRole('button', { name: 'Create channel' }).click();
    await page.getByRole('heading', { level: 1, name: 'Receipts' }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const stored = await rig.t.api('GET', `/channels/${id}`);
    expect(stored.body).toMatchObject({ name: 'Receipts', deliveryType: 'live', tracking: { links: false, opens: true } });
    await rig.visit('/channels');
    await page.getByRole('link', { name: 'Receipts' }).waitFor();
    expect(await page.getByRole('cell', { name: 'live' }).count()).toBe(1);
    await rig.checkA11y();
    await rig.screenshot('channels');
  });

  it('edits a channel, shows a 422 beside the name, lists its linked domains and deletes it', async () => {
    const s = await rig.sender();
    await rig.visit(`/channels/${s.channelId}`);
    const page = rig.page;
    await page.getByRole('link', { name: s.domain }).waitFor();
    expect(await page.getByText(/Sandbox: nothing leaves the server/).count()).toBeGreaterThan(0);
    await page.getByLabel('Name').fill('Newsletters');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { level: 1, name: 'Newsletters' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await rig.t.api('GET', `/channels/${s.channelId}`)).body.name).toBe('Newsletters');

    rig.expectErrors(/^422 PATCH .*\/channels\//);
    rig.expectErrors(/status of 422/);
    await page.getByLabel('Name').fill('x'.repeat(101));
    await page.getByRole('button', { name: 'Save changes' }).click();
    const name = page.getByLabel('Name');
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await name.getAttribute('aria-describedby'))!.split(' ');
    const error = page.locator(`[id="${describedBy[describedBy.length - 1]}"]`);
    expect(await error.textContent()).toBe('must be at most 100 characters');
    await rig.checkA11y();
    await rig.screenshot('channel');

    await page.getByRole('button', { name: 'Delete channel' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Newsletters?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Delete channel' }).click();
    await page.getByRole('heading', { level: 1, name: 'Channels' }).waitFor();
    expect((await rig.t.api('GET', `/channels/${s.channelId}`)).status).toBe(404);
    expect(await page.getByRole('link', { name: 'Newsletters' }).count()).toBe(0);
  });
});
