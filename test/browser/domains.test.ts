/**
 * The Domains pages in chromium: a refused name's error beside the field, add a domain through the form, read its DNS records, copy a
 * value to the clipboard, publish the records in the test DNS server and press Verify (statuses
 * turn verified), rotate the key, relink channels, delete; no sideways scroll at 360 px; axe and
 * screenshots of the list and the detail page at both widths.
 */
import { describe, expect, it } from 'vitest';
import { publish, type DnsRecordJson } from '../support/sending.js';
import { useRig } from './harness.js';

const rig = useRig({
  prepare: async (r) => {
    await r.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: r.t.url });
  },
});

const card = (label: string | RegExp) => rig.page.locator('.dns-record').filter({ has: rig.page.getByRole('heading', { level: 3, name: label }) });

describe('dashboard domains', () => {
  it('adds a domain from the form and shows each DNS record with copy buttons', async () => {
    const ch = await rig.t.api('POST', '/channels', { body: { name: 'Shop mail' } });
    await rig.visit('/domains');
    const page = rig.page;
    await page.getByRole('heading', { name: 'No domains yet' }).waitFor();
    rig.expectErrors(/^422 POST .*\/domains$/);
    rig.expectErrors(/status of 422/);
    const name = page.getByLabel('Domain name');
    await name.fill('not a domain');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
    const errorId = (await name.getAttribute('aria-describedby'))!.split(' ').pop();
    expect(await page.locator(`[id="${errorId}"]`).textContent()).not.toBe('');
    await page.getByLabel('Domain name').fill('mail.shop-demo.net');
    await page.getByRole('checkbox', { name: /Shop mail/ }).check();
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { level: 1, name: 'mail.shop-demo.net' }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const api = (await rig.t.api('GET', `/domains/${id}`)).body;
    expect(api.channels.map((c: { id: string }) => c.id)).toEqual([ch.body.id]);

    const dkim = card(/^DKIM key \(rsa\)$/);
    expect(await dkim.locator('code').nth(1).textContent()).toBe(api.dnsRecords.domainKeyActive.value);
    expect(await dkim.getByText('pending').count()).toBe(1);
    for (const r of api.dnsRecords.returnPath as DnsRecordJson[]) expect(await page.locator('.dns-record code', { hasText: r.value }).count()).toBe(1);
    expect(await card('DMARC (advisory)').count()).toBe(1);
    await dkim.getByRole('button', { name: /^Copy value/ }).click();
    await dkim.getByText('Copied').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(api.dnsRecords.domainKeyActive.value);

    await page.setViewportSize({ width: 360, height: 800 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await page.setViewportSize({ width: 1280, height: 800 });
    await rig.checkA11y();
    await rig.screenshot('domain');
  });

  it('says so when DNS cannot be reached during Verify (503), statuses unchanged', async () => {
    const d = await rig.t.api('POST', '/domains', { body: { name: 'news.dns-down-demo.org' } });
    rig.dns.servfail(d.body.dnsRecords.domainKeyActive.host);
    rig.expectErrors(/^503 POST .*\/verify$/);
    rig.expectErrors(/status of 503/);
    await rig.visit(`/domains/${d.body.id}`);
    await rig.page.getByRole('button', { name: 'Verify' }).click();
    await rig.page.getByRole('alert').filter({ hasText: 'DNS could not be reached' }).waitFor();
    expect(await card(/^DKIM key/).locator('.badge').nth(1).textContent()).toBe('pending');
    rig.dns.remove(d.body.dnsRecords.domainKeyActive.host);
    expect((await rig.t.api('DELETE', `/domains/${d.body.id}`)).status).toBe(204);
  });

  it('verifies once the records are published, rotates the key and deletes the domain', async () => {
    const list = (await rig.t.api('GET', '/domains?name=mail.shop-demo.net')).body;
    const id: string = list.results[0].id;
    const records = (await rig.t.api('GET', `/domains/${id}`)).body.dnsRecords;
    publish(rig.dns, records.domainKeyActive);
    for (const r of records.returnPath) publish(rig.dns, r);
    await rig.visit('/domains');
    const page = rig.page;
    await page.getByRole('link', { name: 'mail.shop-demo.net' }).click();
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('status').filter({ hasText: 'Verified: the domain can send.' }).waitFor();
    await card(/^DKIM key/).getByText('verified').waitFor();
    expect(await page.locator('.page-header .badge').textContent()).toBe('verified');
    for (const label of ['Return path MX (bounces come back here)', 'Return path SPF']) expect(await card(label).locator('.badge').nth(1).textContent()).toBe('verified');
    expect((await rig.t.api('GET', `/domains/${id}`)).body.verified).toBe(true);

    await page.getByRole('button', { name: 'Rotate DKIM key' }).click();
    const rotate = page.getByRole('dialog', { name: 'Rotate the DKIM key?' });
    await rotate.getByText(/current key keeps signing/).waitFor();
    await rotate.getByRole('button', { name: 'Create new key' }).click();
    await card(/^Next DKIM key/).waitFor();
    expect((await rig.t.api('GET', `/domains/${id}`)).body.dnsRecords.domainKeyPending).not.toBeNull();

    await rig.visit('/domains');
    await page.getByRole('cell', { name: 'Shop mail' }).waitFor();
    await rig.checkA11y();
    await rig.screenshot('domains');
    await page.getByRole('link', { name: 'mail.shop-demo.net' }).click();
    await page.getByRole('button', { name: 'Delete domain' }).click();
    await page.getByRole('dialog', { name: 'Delete mail.shop-demo.net?' }).getByRole('button', { name: 'Delete domain' }).click();
    await page.getByRole('heading', { name: 'No domains yet' }).waitFor();
    expect((await rig.t.api('GET', `/domains/${id}`)).status).toBe(404);
  });
});
