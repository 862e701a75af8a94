/**
 * The Activity page in chromium: the newest events first, as many a page as "Per page" says,
 * every column inside the page at 1,280 px; sends found with filters (kept in the URL, so a
 * reload shows the same view), more pages on the `after` cursor by the Load more button and by
 * scrolling, a field error from the problem body beside its field, a row opening its message
 * page; axe and screenshots.
 */
import { describe, expect, it } from 'vitest';
import { useRig } from './harness.js';
import { sendMail } from './mail-fixtures.js';

const READER = 'paging-reader@inbox-demo.net';
const COUNT = 30;
/** A send as real ones look: a long subject, several long addresses, a bounce with its reply. */
const WIDE = {
  subject: 'Your order #100234 has shipped: track the parcel and see the delivery window',
  to: [{ email: 'accounts-payable.department@inbox-demo-enterprise.net' }, { email: 'reception.front-desk@inbox-demo-enterprise.net' }, { email: 'no-such-mailbox@bounce.postrider.invalid' }],
};

const rig = useRig({
  prepare: async (r) => {
    const s = await r.sender();
    for (let i = 0; i < COUNT; i++) await sendMail(r, s, { to: [{ email: READER }], subject: `paging ${String(i).padStart(2, '0')}`, tags: ['paging'] });
    await sendMail(r, s, { to: [{ email: 'someone-else@inbox-demo.net' }], subject: 'not paging' });
    await sendMail(r, s, WIDE);
  },
});

const rows = () => rig.page.locator('table tbody tr');

describe('activity page', () => {
  it('lists the events of all sends', async () => {
    await rig.visit('/activity');
    await rig.page.getByRole('heading', { level: 1, name: 'Activity' }).waitFor();
    await rig.page.getByText(`of ${(COUNT + 1) * 3 + 4} events`).waitFor();
    await rig.checkA11y();
    await rig.screenshot('activity');
  });

  it('filters by recipient and event type, keeps the filter in the URL, and loads the next page with the button', async () => {
    const page = rig.page;
    await page.getByLabel('Recipient').fill(READER);
    await page.getByRole('checkbox', { name: 'accepted' }).check();
    await page.getByLabel('Per page').fill('25');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('eventTypes')).toBe('accepted');
    const params = new URL(page.url()).searchParams;
    expect(params.get('recipient')).toBe(READER);
    expect(params.get('limit')).toBe('25');
    await page.getByText(`Showing 25 of ${COUNT} events`).waitFor();
    expect(await rows().count()).toBe(25);
    const more = page.getByRole('button', { name: 'Load more events' });
    await more.focus();
    await page.keyboard.press('Enter');
    await page.getByText(`Showing ${COUNT} of ${COUNT} events`).waitFor();
    expect(await rows().count()).toBe(COUNT);
    await expect.poll(() => more.count()).toBe(0);
    // A reload (or a shared link) shows the same view.
    await page.reload();
    await page.getByText(`Showing 25 of ${COUNT} events`).waitFor();
    expect(await page.getByLabel('Recipient').inputValue()).toBe(READER);
    expect(await page.getByRole('checkbox', { name: 'accepted' }).isChecked()).toBe(true);
    await rig.checkA11y();
    await rig.screenshot('activity-filtered');
  });

  it('loads further pages as the end of the list scrolls into view', async () => {
    const page = rig.page;
    await rig.visit(`/activity?recipient=${encodeURIComponent(READER)}&eventTypes=delivered&tags=paging&limit=8`);
    await page.getByText(`of ${COUNT} events`).waitFor();
    await expect
      .poll(async () => {
        await page.mouse.wheel(0, 5000);
        return rows().count();
      })
      .toBe(COUNT);
    expect(await page.getByRole('button', { name: 'Load more events' }).count()).toBe(0);
  });

  it('follows a short page the daemon marked partial (X-Page-Partial) instead of taking it as the last', async () => {
    const page = rig.page;
    const asked: string[] = [];
    // The second page (5 events) is answered as if the daemon had stopped at its scan budget.
    await page.route(/\/activity\/events\?/, async (route) => {
      const url = new URL(route.request().url());
      asked.push(url.searchParams.get('after') ?? '0');
      const res = await route.fetch();
      const partial: Record<string, string> = asked.length === 2 ? { 'x-page-partial': 'true' } : {};
      await route.fulfill({ response: res, headers: { ...res.headers(), ...partial } });
    });
    try {
      await rig.visit(`/activity?recipient=${encodeURIComponent(READER)}&eventTypes=accepted&limit=25`);
      await page.getByText(`Showing 25 of ${COUNT} events`).waitFor();
      // The next page by scrolling: a click on Load more raced the list's own loader, which the
      // click's scroll into view set off (the button was replaced, then gone, and the click waited).
      await expect
        .poll(async () => {
          await page.mouse.wheel(0, 5000);
          return rows().count();
        })
        .toBe(COUNT);
      await page.getByText(`Showing ${COUNT} of ${COUNT} events`).waitFor();
      // Short but partial: more may follow, so the list asks once more (and that empty page ends it).
      await expect.poll(() => asked.length).toBe(3);
      await expect.poll(() => page.getByRole('button', { name: 'Load more events' }).count()).toBe(0);
      expect(await rows().count()).toBe(COUNT);
    } finally {
      await page.unroute(/\/activity\/events\?/);
    }
  });

  it('shows a refused filter beside its field', async () => {
    rig.expectErrors(/^422 GET .*\/activity\/events/);
    rig.expectErrors(/status of 422/);
    const page = rig.page;
    await rig.visit('/activity');
    await page.getByLabel('Tags').fill('bad tag!');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('alert').getByText('The query has invalid parameters').waitFor();
    const tags = page.getByLabel('Tags');
    expect(await tags.getAttribute('aria-invalid')).toBe('true');
    await page.getByText('must be 1 to 100 letters, digits, hyphens or underscores').waitFor();
    await page.getByRole('heading', { name: 'No events match these filters' }).waitFor();
  });

  it('opens the message page from a row', async () => {
    const page = rig.page;
    await rig.visit(`/activity?subject=paging%2007&eventTypes=accepted`);
    await page.getByRole('link', { name: 'paging 07' }).click();
    await page.getByRole('heading', { level: 1, name: 'paging 07' }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/dashboard\/messages\/[0-9a-f-]{36}$/);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Activity' }).getAttribute('aria-current')).toBe('page');
  });

  it('loads as many events as "Per page" says (50 by default), not the API\'s default of 100', async () => {
    const page = rig.page;
    await rig.visit('/activity');
    const total = (COUNT + 1) * 3 + 4;
    await page.getByText(`Showing 50 of ${total} events`).waitFor();
    expect(await page.getByLabel('Per page').inputValue()).toBe('50');
    expect(await rows().count()).toBe(50);
    await expect
      .poll(async () => {
        await page.mouse.wheel(0, 5000);
        return rows().count();
      })
      .toBe(total);
  });

  it('lists the newest events first, and older ones on the next page', async () => {
    const page = rig.page;
    await rig.visit(`/activity?recipient=${encodeURIComponent(READER)}&eventTypes=accepted&limit=25`);
    await page.getByText(`Showing 25 of ${COUNT} events`).waitFor();
    const subjects = () => page.locator('table tbody tr .subject-link').allTextContents();
    const newestFirst = Array.from({ length: COUNT }, (_, i) => `paging ${String(COUNT - 1 - i).padStart(2, '0')}`);
    expect(await subjects()).toEqual(newestFirst.slice(0, 25));
    await expect
      .poll(async () => {
        await page.mouse.wheel(0, 5000);
        return rows().count();
      })
      .toBe(COUNT);
    expect(await subjects()).toEqual(newestFirst);
  });

  it('fits every column, Channel and Details too, inside the page at 1,280 px without a sideways scroll', async () => {
    const page = rig.page;
    await page.setViewportSize({ width: 1280, height: 800 });
    await rig.visit(`/activity?subject=${encodeURIComponent('has shipped')}`);
    await page.getByText('Showing 4 of 4 events').waitFor();
    await page.getByText('550 5.1.1 simulated bounce (sandbox)').waitFor();
    await page.getByRole('region', { name: 'Events' }).waitFor();
    const box = (await page.evaluate(`(() => {
      const el = document.querySelector('.table-wrap[aria-label="Events"]');
      return { scroll: el.scrollWidth, client: el.clientWidth };
    })()`)) as { scroll: number; client: number };
    expect(box.scroll, 'the table needs a sideways scroll').toBeLessThanOrEqual(box.client);
    for (const name of ['Channel', 'Details']) {
      const header = (await page.getByRole('columnheader', { name }).boundingBox())!;
      expect(header.x + header.width, `${name} ends inside the window`).toBeLessThanOrEqual(1280);
    }
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
    await rig.screenshot('activity-wide-rows');
  });
});
