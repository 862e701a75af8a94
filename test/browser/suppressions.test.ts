/**
 * The Suppressions page in chromium: the list of a channel and mail type with its filters and
 * pages, an address added through the form (an invalid one reported beside it), a field error
 * from the problem body, and a removal confirmed in the dialog; axe and screenshots.
 */
import { describe, expect, it } from 'vitest';
import { useRig } from './harness.js';

let channelId: string;

const rig = useRig({
  prepare: async (r) => {
    channelId = (await r.sender()).channelId;
  },
});

describe('suppressions page', () => {
  it('says what to do when a channel has no suppressions', async () => {
    await rig.visit('/suppressions');
    await rig.page.getByRole('heading', { name: 'No suppressed addresses' }).waitFor();
    await rig.checkA11y();
    await rig.screenshot('suppressions-empty');
  });

  it('adds addresses through the form, shows them, and reports an invalid one beside the list', async () => {
    const page = rig.page;
    await page.getByRole('textbox', { name: 'Addresses', exact: true }).fill('ann@grove-mail.net\nnot-an-address, bob@harbor-post.org');
    await page.getByRole('button', { name: 'Add suppressions' }).click();
    const outcome = page.getByRole('status', { name: 'Outcome per address' });
    await outcome.getByText('invalid address').waitFor();
    await page.getByRole('cell', { name: 'ann@grove-mail.net', exact: true }).waitFor();
    await page.getByRole('cell', { name: 'bob@harbor-post.org', exact: true }).waitFor();
    const api = await rig.t.api('GET', `/suppressions?channelId=${channelId}&mailType=transactional`);
    expect(api.body.results.map((s: { email: string }) => s.email).sort()).toEqual(['ann@grove-mail.net', 'bob@harbor-post.org']);
    await rig.checkA11y();
    await rig.screenshot('suppressions');
  });

  it('shows the problem body of a refused add beside the field', async () => {
    // The 422 answer and chromium's console line about it.
    rig.expectErrors(/422/);
    const page = rig.page;
    await page.getByRole('textbox', { name: 'Addresses', exact: true }).fill('');
    await page.getByRole('button', { name: 'Add suppressions' }).click();
    await page.locator('.field-invalid', { has: page.getByRole('textbox', { name: 'Addresses', exact: true }) }).locator('.field-error').waitFor();
    expect(await page.getByRole('textbox', { name: 'Addresses', exact: true }).getAttribute('aria-invalid')).toBe('true');
  });

  it('filters by address and by reason, and pages through a long list', async () => {
    const emails = Array.from({ length: 30 }, (_, i) => `reader${String(i).padStart(2, '0')}@isle-mail.net`);
    expect((await rig.t.api('POST', '/suppressions', { body: { channelId, mailType: 'transactional', emails } })).status).toBe(200);
    await rig.visit('/suppressions');
    const page = rig.page;
    await page.getByText('1–25 of 32').waitFor();
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('26–32 of 32').waitFor();
    await page.getByLabel('Address contains').fill('grove');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('cell', { name: 'ann@grove-mail.net', exact: true }).waitFor();
    expect(await page.getByRole('row').count()).toBe(2);
    await page.getByLabel('Address contains').fill('');
    await page.getByLabel('Reason').selectOption('bounce');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('heading', { name: 'No suppression matches these filters' }).waitFor();
    // The filters are in the address: a reload shows the same list.
    expect(new URL(page.url()).searchParams.get('reason')).toBe('bounce');
    await page.reload();
    await page.getByRole('heading', { name: 'No suppression matches these filters' }).waitFor();
    expect(await page.getByLabel('Reason').inputValue()).toBe('bounce');
  });

  it('removes an address after confirming in the dialog', async () => {
    await rig.visit('/suppressions');
    const page = rig.page;
    await page.getByLabel('Address contains').fill('harbor');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: 'Remove bob@harbor-post.org' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove this suppression?' });
    await dialog.waitFor();
    await rig.checkA11y();
    await dialog.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('heading', { name: 'No suppression matches these filters' }).waitFor();
    // The removed row's button is gone: focus goes to the page's heading, not to <body>.
    await expect.poll(() => page.evaluate('document.activeElement && document.activeElement.id')).toBe('page-title');
    const api = await rig.t.api('GET', `/suppressions?channelId=${channelId}&mailType=transactional&email=harbor`);
    expect(api.body.totalCount).toBe(0);
  });
});
