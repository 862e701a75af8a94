/**
 * Issue 18: a short `hostname` (the machine's `vm`) makes the DNS records a new user is told to
 * publish point at a name nobody can resolve. POST /domains and GET /domains/{id} carry
 * `warnings` naming the setting to change while it lasts; with fully qualified names (and a DMARC
 * report address, whose absence is warned about as well: domains-dmarc.test.ts) they have none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

let t: TestDaemon | undefined;

afterEach(async () => {
  await t?.stop();
  t = undefined;
});

async function createAndGet(name: string) {
  const created = await t!.api('POST', '/domains', { body: { name } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const one = await t!.api('GET', `/domains/${created.body.id}`);
  expect(one.status).toBe(200);
  const list = await t!.api('GET', '/domains');
  return { created: created.body, one: one.body, listed: list.body.results[0] };
}

describe('warnings on the DNS records of a domain', () => {
  it('warns on create and retrieve that the MX target is a short hostname and names the setting', async () => {
    t = await startDaemon({ hostname: 'vm', 'domains.dmarcReportAddress': 'dmarc@reports.postrider-test.net' });
    const { created, one, listed } = await createAndGet('warn-short.com');
    expect(created.dnsRecords.returnPath.find((r: { type: string }) => r.type === 'mx').value).toBe('10 vm');
    expect(created.warnings[0]).toEqual({ code: 'hostname_not_fqdn', setting: 'hostname', message: expect.stringContaining('POSTRIDER_HOSTNAME') });
    expect(created.warnings[0].message).toContain('"vm"');
    expect(one.warnings).toEqual(created.warnings);
    expect(listed).not.toHaveProperty('warnings');
  });

  it('warns about the CNAME targets too when a wildcard http.host makes publicUrl name the short hostname', async () => {
    t = await startDaemon({ hostname: 'vm', 'http.host': '0.0.0.0', 'domains.dmarcReportAddress': 'dmarc@reports.postrider-test.net' });
    const { created } = await createAndGet('warn-wildcard.com');
    expect(created.dnsRecords.tracking.value).toBe('vm');
    expect(created.warnings.map((w: { code: string; setting: string }) => [w.code, w.setting])).toEqual([
      ['hostname_not_fqdn', 'hostname'],
      ['link_host_not_fqdn', 'publicUrl'],
    ]);
    expect(created.warnings[1].message).toContain('POSTRIDER_PUBLIC_URL');
  });

  it('has no warnings once hostname is fully qualified', async () => {
    t = await startDaemon({ hostname: 'mx.postrider-test.net', 'http.host': '0.0.0.0', 'domains.dmarcReportAddress': 'dmarc@reports.postrider-test.net' });
    const { created, one } = await createAndGet('warn-none.com');
    expect(created.dnsRecords.tracking.value).toBe('mx.postrider-test.net');
    expect(created).not.toHaveProperty('warnings');
    expect(one).not.toHaveProperty('warnings');
  });
});
