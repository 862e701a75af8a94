/**
 * DNS verification, key rotation and the periodic re-check, against a real daemon whose DNS
 * server is the in-process test server (never real DNS).
 */
import crypto from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { HOSTNAME, newDomain, uniqueName, type DnsRecords } from '../support/domains.js';
import { publish, publishAll } from '../support/sending.js';

let t: TestDaemon;
let dns: TestDns;

beforeAll(async () => ({ t, dns } = await startDaemonWithDns({ hostname: HOSTNAME })));
afterAll(() => stopDaemonWithDns({ t, dns }));

afterEach(() => dns.clear());

async function verify(id: string): Promise<DnsRecords> {
  const res = await t.api('POST', `/domains/${id}/verify`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function get(id: string) {
  return (await t.api('GET', `/domains/${id}`)).body as { verified: boolean; dnsRecords: DnsRecords };
}

function statuses(r: DnsRecords): string[] {
  return [r.domainKeyActive.status, ...r.returnPath.map((x) => x.status)];
}

/** A domain with every record published and verified. */
async function verifiedDomain(body: Record<string, unknown> = {}) {
  const d = await newDomain(t, { name: uniqueName(), ...body });
  publishAll(dns, d.dnsRecords);
  const records = await verify(d.id);
  expect(statuses(records)).toEqual(['verified', 'verified', 'verified']);
  return { ...d, dnsRecords: records };
}

describe('verifying a domain', () => {
  it('answers with the dnsRecords object, all verified with lastCheckedAt, once every record is published', async () => {
    const d = await newDomain(t, { name: uniqueName() });
    publishAll(dns, d.dnsRecords);
    const before = Date.now();
    const records = await verify(d.id);
    expect(Object.keys(records).sort()).toEqual(['dmarc', 'domainKeyActive', 'domainKeyPending', 'returnPath', 'tracking', 'unsubscribe', 'verified']);
    expect((records as DnsRecords & { verified: boolean }).verified).toBe(true);
    expect(records.domainKeyPending).toBeNull();
    for (const r of [records.domainKeyActive, ...records.returnPath]) {
      expect(r.status).toBe('verified');
      expect(Date.parse(r.lastCheckedAt!)).toBeGreaterThanOrEqual(before - 1000);
    }
    expect((await get(d.id)).verified).toBe(true);
  });

  it('verifies a 2048-bit key whose TXT record is split into 255-byte strings', async () => {
    const d = await newDomain(t, { name: uniqueName(), dkimAlgorithm: 'rsa' });
    expect(Buffer.byteLength(d.dnsRecords.domainKeyActive.value)).toBeGreaterThan(255);
    publishAll(dns, d.dnsRecords);
    expect((await verify(d.id)).domainKeyActive.status).toBe('verified');
  });

  it('marks every record failed, and the domain unverified, when nothing is published', async () => {
    const d = await newDomain(t, { name: uniqueName() });
    const records = await verify(d.id);
    expect(statuses(records)).toEqual(['failed', 'failed', 'failed']);
    expect(records.domainKeyActive.lastCheckedAt).not.toBeNull();
    expect((await get(d.id)).verified).toBe(false);
  });

  it('verifies records one by one: the domain is verified only once the key and the whole return path are', async () => {
    const d = await newDomain(t, { name: uniqueName() });
    publish(dns, d.dnsRecords.domainKeyActive);
    expect(statuses(await verify(d.id))).toEqual(['verified', 'failed', 'failed']);
    expect((await get(d.id)).verified).toBe(false);

    publish(dns, d.dnsRecords.returnPath[0]);
    expect(statuses(await verify(d.id))).toEqual(['verified', 'verified', 'failed']);
    expect((await get(d.id)).verified).toBe(false);

    publish(dns, d.dnsRecords.returnPath[1]);
    expect(statuses(await verify(d.id))).toEqual(['verified', 'verified', 'verified']);
    expect((await get(d.id)).verified).toBe(true);
  });

  it('fails records that hold something else: another key, an MX elsewhere, an SPF policy without our host', async () => {
    const d = await newDomain(t, { name: uniqueName(), dkimAlgorithm: 'ed25519' });
    const [mx, spf] = d.dnsRecords.returnPath;
    const otherKey = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
    dns.set(d.dnsRecords.domainKeyActive.host, 'TXT', [`v=DKIM1; k=ed25519; p=${otherKey.toString('base64')}`]);
    dns.set(mx.host, 'MX', [{ priority: 10, exchange: 'mx.elsewhere.net' }]);
    dns.set(spf.host, 'TXT', ['v=spf1 a:mx.elsewhere.net ~all', 'google-site-verification=abc']);
    expect(statuses(await verify(d.id))).toEqual(['failed', 'failed', 'failed']);
  });

  it('accepts equivalent published forms: reordered DKIM tags with folded key data, any MX priority and case, SPF via mx', async () => {
    const d = await newDomain(t, { name: uniqueName() });
    const [mx, spf] = d.dnsRecords.returnPath;
    const p = /p=(.+)$/.exec(d.dnsRecords.domainKeyActive.value)![1];
    const folded = `k=rsa; t=s; p=${p.slice(0, 100)} ${p.slice(100, 200)}\t${p.slice(200)};`;
    dns.set(d.dnsRecords.domainKeyActive.host, 'TXT', ['unrelated text', folded]);
    dns.set(mx.host, 'MX', [
      { priority: 5, exchange: 'backup.other.net' },
      { priority: 20, exchange: `${HOSTNAME.toUpperCase()}.` },
    ]);
    dns.set(spf.host, 'TXT', ['v=spf1 ip4:192.0.2.0/24 mx -all']);
    expect(statuses(await verify(d.id))).toEqual(['verified', 'verified', 'verified']);
  });

  it('refuses two SPF records at the return-path host (an SPF permerror)', async () => {
    const d = await newDomain(t, { name: uniqueName() });
    publishAll(dns, d.dnsRecords);
    const spf = d.dnsRecords.returnPath[1];
    dns.set(spf.host, 'TXT', [spf.value, 'v=spf1 -all']);
    expect((await verify(d.id)).returnPath[1].status).toBe('failed');
  });

  it('answers 503 with Retry-After and keeps statuses and lastCheckedAt when DNS answers with a temporary error', async () => {
    const d = await verifiedDomain();
    const fresh = await newDomain(t, { name: uniqueName() });
    dns.servfail(d.dnsRecords.domainKeyActive.host);
    dns.servfail(d.dnsRecords.returnPath[0].host);
    dns.servfail(fresh.dnsRecords.domainKeyActive.host);
    dns.servfail(fresh.dnsRecords.returnPath[0].host);
    for (const r of [d.dnsRecords.tracking!, d.dnsRecords.unsubscribe!, d.dnsRecords.dmarc]) dns.servfail(r.host);

    const failed = await t.api('POST', `/domains/${d.id}/verify`);
    expect(failed.status, JSON.stringify(failed.body)).toBe(503);
    expect(failed.body.code).toBe('service_unavailable');
    expect(Number(failed.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(failed.body.detail).toContain(d.dnsRecords.returnPath[0].host);
    // Statuses and lastCheckedAt as they were; only `check` says the last lookup failed.
    const after = (await get(d.id)).dnsRecords;
    const withoutCheck = (r: DnsRecords) => JSON.parse(JSON.stringify(r, (k, v) => (k === 'check' ? undefined : v)));
    const { verified: _, ...before } = d.dnsRecords as DnsRecords & { verified?: boolean };
    expect(withoutCheck(after)).toEqual(withoutCheck(before));
    for (const r of [after.domainKeyActive, ...after.returnPath, after.tracking!, after.dmarc]) expect(r.check).toEqual({ result: 'lookup_failed', checkedAt: expect.any(String) });
    expect((await get(d.id)).verified).toBe(true);
    expect((await t.api('POST', `/domains/${fresh.id}/verify`)).status).toBe(503);
    const untouched = (await get(fresh.id)).dnsRecords;
    expect(statuses(untouched)).toEqual(['pending', 'pending', 'pending']);
    expect(untouched.domainKeyActive.lastCheckedAt).toBeNull();
  });

  it('moves a verified record that disappeared to failing, unverifies the domain, and recovers when it is back', async () => {
    const d = await verifiedDomain();
    dns.remove(d.dnsRecords.returnPath[0].host, 'MX');
    const records = await verify(d.id);
    expect(statuses(records)).toEqual(['verified', 'failing', 'verified']);
    expect((await get(d.id)).verified).toBe(false);
    expect(statuses(await verify(d.id))).toEqual(['verified', 'failing', 'verified']);

    publish(dns, d.dnsRecords.returnPath[0]);
    expect(statuses(await verify(d.id))).toEqual(['verified', 'verified', 'verified']);
    expect((await get(d.id)).verified).toBe(true);
  });

  it('sees a record published after a failed check at once (verification does not cache DNS answers)', async () => {
    const d = await newDomain(t, { name: uniqueName() });
    expect(statuses(await verify(d.id))).toEqual(['failed', 'failed', 'failed']);
    publishAll(dns, d.dnsRecords);
    expect(statuses(await verify(d.id))).toEqual(['verified', 'verified', 'verified']);
  });
});

describe('rotating the DKIM key', () => {
  it('adds a pending key, promotes it once published and verified, retires the old key and signs with the new one', async () => {
    const d = await verifiedDomain();
    const oldSelector = d.dnsRecords.domainKeyActive.host.split('.')[0];

    const rotated = await t.api('POST', `/domains/${d.id}/rotate-key`);
    expect(rotated.status).toBe(200);
    // The answer is the new pending record alone, as the SDKs' rotateKey expects.
    const pending = rotated.body;
    expect(pending).toEqual({ type: 'txt', host: expect.any(String), value: expect.stringMatching(/^v=DKIM1; /), status: 'pending', lastCheckedAt: null });
    const read = await get(d.id);
    expect(read.verified).toBe(true);
    expect(read.dnsRecords.domainKeyActive).toEqual(d.dnsRecords.domainKeyActive);
    expect(read.dnsRecords.domainKeyPending).toEqual(pending);
    expect(pending.host).toMatch(new RegExp(`^pr\\d{6}[0-9a-f]{4}\\._domainkey\\.${d.name.replace(/\./g, '\\.')}$`));
    expect(pending.host).not.toBe(d.dnsRecords.domainKeyActive.host);
    expect((await t.daemon.store.domains.signingKey({ accountId: t.accountId, domainName: d.name }))?.selector).toBe(oldSelector);

    // Not published yet: the pending key fails, the active one keeps signing.
    const early = await verify(d.id);
    expect(early.domainKeyPending?.status).toBe('failed');
    expect(early.domainKeyActive.host).toBe(d.dnsRecords.domainKeyActive.host);

    publish(dns, pending);
    const done = await verify(d.id);
    expect(done.domainKeyPending).toBeNull();
    expect(done.domainKeyActive).toMatchObject({ host: pending.host, value: pending.value, status: 'verified' });
    expect((await get(d.id)).verified).toBe(true);

    const newSelector = pending.host.split('.')[0];
    const key = (await t.daemon.store.domains.signingKey({ accountId: t.accountId, domainName: d.name }))!;
    expect(key.selector).toBe(newSelector);
    const published = Buffer.from(/p=(.+)$/.exec(pending.value)![1], 'base64');
    expect(crypto.createPublicKey(key.privateKeyPem).export({ format: 'der', type: 'spki' }).equals(published)).toBe(true);
    expect((await t.daemon.store.domains.dkimSelectors(d.id)).includes(oldSelector)).toBe(false);
  });

  it('replaces a pending key that was not promoted yet, and can switch the algorithm', async () => {
    const d = await newDomain(t, { name: uniqueName() });
    const first = await t.api('POST', `/domains/${d.id}/rotate-key`, { body: {} });
    const second = await t.api('POST', `/domains/${d.id}/rotate-key`, { body: { dkimAlgorithm: 'ed25519' } });
    expect(second.status).toBe(200);
    const [a, b] = [first.body, second.body];
    expect(b.host).not.toBe(a.host);
    expect(b.value).toMatch(/^v=DKIM1; k=ed25519; p=/);
    expect((await t.daemon.store.domains.dkimSelectors(d.id)).includes(a.host.split('.')[0])).toBe(false);

    // The replaced key's record no longer counts even if someone publishes it.
    publish(dns, a);
    expect((await verify(d.id)).domainKeyPending?.host).toBe(b.host);
  });

  it('refuses an unknown algorithm or field with 422', async () => {
    const d = await newDomain(t, { name: uniqueName(), dkimAlgorithm: 'ed25519' });
    const res = await t.api('POST', `/domains/${d.id}/rotate-key`, { body: { dkimAlgorithm: 'dsa', bits: 4096 } });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/bits', '/dkimAlgorithm']);
    expect((await get(d.id)).dnsRecords.domainKeyPending).toBeNull();
  });
});

describe('periodic re-check', () => {
  it('moves a removed record of a verified domain to failing and unverifies it, then sees it recover', async () => {
    const d = await verifiedDomain();
    const never = await newDomain(t, { name: uniqueName() });
    dns.remove(d.dnsRecords.domainKeyActive.host);

    const summary = await t.daemon.domainRecheck.runOnce();
    expect(summary.lost).toBeGreaterThanOrEqual(1);
    const after = await get(d.id);
    expect(after.verified).toBe(false);
    expect(after.dnsRecords.domainKeyActive.status).toBe('failing');
    expect(after.dnsRecords.returnPath.map((r) => r.status)).toEqual(['verified', 'verified']);
    // Domains never verified are left to their owners' verify calls.
    expect((await get(never.id)).dnsRecords.domainKeyActive.lastCheckedAt).toBeNull();

    publish(dns, d.dnsRecords.domainKeyActive);
    await t.daemon.domainRecheck.runOnce();
    expect((await get(d.id)).verified).toBe(true);
  });

  it('promotes a published pending key of a verified domain without a verify call', async () => {
    const d = await verifiedDomain();
    const pending = (await t.api('POST', `/domains/${d.id}/rotate-key`)).body;
    publish(dns, pending);
    await t.daemon.domainRecheck.runOnce();
    const after = await get(d.id);
    expect(after.dnsRecords.domainKeyActive.host).toBe(pending.host);
    expect(after.dnsRecords.domainKeyPending).toBeNull();
  });

  it('joins a run in progress instead of starting a second one', async () => {
    await verifiedDomain();
    const a = t.daemon.domainRecheck.runOnce();
    const b = t.daemon.domainRecheck.runOnce();
    expect(b).toBe(a);
    await a;
  });
});
