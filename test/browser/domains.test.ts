/**
 * The Domains pages in chromium: a refused name's error beside the field, add a domain through the form, read its DNS records, copy a
 * value to the clipboard, publish the records in the test DNS server and press Verify (statuses
 * turn verified), rotate the key, relink channels, delete; no sideways scroll at 360 px; axe and
 * screenshots of the list and the detail page at both widths. What Verify found on each record
 * (found, missing, another value with the values DNS has), the default loopback publicUrl's
 * warnings on the link-host records, and a return-path record that replaces the one the domain
 * was verified with before a hostname change (a second daemon on the same data folder).
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log/logger.js';
import { startDaemon } from '../support/daemon.js';
import { HOSTNAME } from '../support/domains.js';
import { publish, setupSender, type DnsRecordJson } from '../support/sending.js';
import { testStoreOverrides } from '../support/store.js';
import { checkA11y, screenshot, useRig } from './harness.js';

const rig = useRig({
  // The default hostname is the machine's name: pinned to a short one, as on this test machine, so
  // the return path's hostname_not_fqdn warning shows wherever the tests run.
  daemon: { hostname: 'vm' },
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
    await card(/^DKIM key/).locator('.dns-check').getByText('could not be looked up').waitFor();
    rig.dns.remove(d.body.dnsRecords.domainKeyActive.host);
    expect((await rig.t.api('DELETE', `/domains/${d.body.id}`)).status).toBe(204);
  });

  it('shows what Verify found on each record (found, missing, another value and what DNS has) and the loopback publicUrl\'s warnings', async () => {
    const d = (await rig.t.api('POST', '/domains', { body: { name: 'mail.partly-demo.net' } })).body;
    const spf = (d.dnsRecords.returnPath as DnsRecordJson[]).find((r) => r.type === 'txt')!;
    publish(rig.dns, d.dnsRecords.domainKeyActive);
    const wrongSpf = 'v=spf1 include:old-provider.partly-demo.net -all';
    rig.dns.set(spf.host, 'TXT', [wrongSpf]);
    await rig.visit(`/domains/${d.id}`);
    const page = rig.page;
    expect(await card('Return path SPF').getByText('not yet').count()).toBe(1);
    await page.getByRole('button', { name: 'Verify' }).click();
    const summary = page.getByRole('status').filter({ hasText: 'Not verified yet' });
    await summary.waitFor();
    expect(await summary.textContent()).toContain('Return path SPF: another value');
    expect(await summary.textContent()).toContain('Return path MX (bounces come back here): missing');
    await card(/^DKIM key/).getByText('verified').waitFor();
    expect(await card(/^DKIM key/).locator('.dns-check').textContent()).toMatch(/^found, checked /);
    expect(await card('Return path SPF').locator('.dns-check strong').textContent()).toBe('another value:');
    expect(await card('Return path SPF').getByRole('list', { name: 'Values found' }).textContent()).toBe(wrongSpf);
    expect(await card(/^Return path MX/).locator('.dns-check strong').textContent()).toBe('missing');
    expect(await page.locator('.page-header .badge').textContent()).toBe('pending');

    for (const label of [/^Tracking link host/, /^Unsubscribe link host/]) {
      const warnings = card(label).getByRole('list', { name: 'Warnings' });
      expect(await warnings.getByText(/an IP address, which a CNAME cannot name/).count()).toBe(1);
      expect(await warnings.getByText(/is a loopback or private address/).count()).toBe(1);
      expect(await warnings.locator('code').allTextContents()).toEqual(['publicUrl', 'publicUrl']);
    }
    expect(await card('Return path SPF').getByRole('list', { name: 'Warnings' }).locator('code').allTextContents()).toEqual(['hostname']);

    await page.setViewportSize({ width: 360, height: 800 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await page.setViewportSize({ width: 1280, height: 800 });
    await rig.checkA11y();
    await rig.screenshot('domain-checks');
    expect((await rig.t.api('DELETE', `/domains/${d.id}`)).status).toBe(204);
  });

  it('notes a return-path record that replaces the one the domain was verified with: the old value is still accepted', async () => {
    // Verified with hostname vm, then started again on the same data folder with a new hostname.
    const first = await startDaemon({ hostname: 'vm', 'dns.servers': [rig.dns.address] });
    const sender = await setupSender(first, rig.dns);
    await first.daemon.stop();
    const overrides = { dataDir: first.dataDir, ...testStoreOverrides(first.dataDir), 'http.port': 0, 'log.level': 'silent', 'smtp.enabled': false, 'delivery.enabled': false, 'dns.servers': [rig.dns.address], hostname: HOSTNAME };
    const second = new Daemon(loadConfig({ env: {}, overrides }), createLogger({ level: 'silent' }));
    await second.start();
    const context = await rig.browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const p = await context.newPage();
      const errors: string[] = [];
      p.on('response', (res) => void (res.status() >= 400 && errors.push(`${res.status()} ${res.url()}`)));
      p.on('console', (msg) => void (msg.type() === 'error' && errors.push(msg.text())));
      const url = `http://127.0.0.1:${second.http.port}/dashboard`;
      await p.goto(`${url}/`);
      await p.getByLabel('API key').fill(first.apiKey);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('navigation', { name: 'Main' }).waitFor();
      await p.goto(`${url}/domains/${sender.domainId}`);
      await p.getByRole('button', { name: 'Verify' }).click();
      await p.getByRole('status').filter({ hasText: 'Verified: the domain can send.' }).getByText(/MX.*: another value; the old value is still accepted/).waitFor();
      const mx = p.locator('.dns-record').filter({ has: p.getByRole('heading', { level: 3, name: /^Return path MX/ }) });
      expect(await mx.locator('.dns-fields code').nth(1).textContent()).toBe(`10 ${HOSTNAME}`);
      expect(await mx.getByRole('list', { name: 'Values found' }).textContent()).toBe('10 vm');
      const note = mx.getByRole('note', { name: 'Replaced record' });
      expect(await note.textContent()).toContain('the old value is still accepted until this one is found');
      expect(await note.locator('code').nth(1).textContent()).toBe('10 vm');
      expect(await p.locator('.page-header .badge').textContent()).toBe('verified');
      await p.setViewportSize({ width: 360, height: 800 });
      expect(await p.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
      await checkA11y(p);
      await screenshot(p, 'domain-replaced');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await second.stop();
      fs.rmSync(first.dataDir, { recursive: true, force: true });
    }
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
