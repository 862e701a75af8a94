/**
 * Dual signing (RFC 8463 3; issue 21, defect 3): an ed25519 domain gets an RSA companion key,
 * both records are listed and verified, mail is signed with both, and two independent verifiers
 * (dkimpy and mailauth's) find both signatures valid with the keys the test DNS server publishes.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { dkimpyAvailable, dkimpyVerifyEach } from '../support/dkimpy.js';
import { HOSTNAME, newChannel, uniqueName, type DnsRecords } from '../support/domains.js';
import { dropRsaCompanion } from '../support/engine-fixtures.js';
import { publish, publishAll, setupSender } from '../support/sending.js';
import { lookupTxt, signedBody, verifyDkim } from '../support/signing.js';

let t: TestDaemon;
let dns: TestDns;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ hostname: HOSTNAME, 'domains.dkimAlgorithm': 'ed25519' }));
});
afterAll(() => stopDaemonWithDns({ t, dns }));

type Domain = { id: string; name: string; verified: boolean; dnsRecords: DnsRecords };

async function create(): Promise<Domain> {
  const channelId = await newChannel(t);
  const res = await t.api('POST', '/domains', { body: { name: uniqueName(), channelIds: [channelId] } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function verify(id: string): Promise<Domain> {
  const res = await t.api('POST', `/domains/${id}/verify`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (await t.api('GET', `/domains/${id}`)).body;
}

function signatureTags(raw: Buffer): Array<Record<string, string>> {
  const head = raw.toString('latin1').split('\r\n\r\n')[0].replace(/\r\n[ \t]+/g, ' ');
  return head
    .split('\r\n')
    .filter((l) => /^dkim-signature:/i.test(l))
    .map((l) => Object.fromEntries(l.slice(l.indexOf(':') + 1).split(';').map((p) => p.trim().split(/=(.*)/s).slice(0, 2).map((x) => x.replace(/\s+/g, '')))));
}

describe('an ed25519 domain', () => {
  afterEach(() => dns.clear());

  it('lists the ed25519 key and its RSA companion, each with its own selector and status', async () => {
    const d = await create();
    const { domainKeyActive: ed, domainKeyActiveCompanion: rsa } = d.dnsRecords;
    expect(ed.value).toMatch(/^v=DKIM1; k=ed25519; p=/);
    expect(rsa?.value).toMatch(/^v=DKIM1; k=rsa; p=/);
    expect(rsa?.host).toBe(`${ed.host.split('.')[0]}rsa._domainkey.${d.name}`);
    expect([ed.status, rsa?.status]).toEqual(['pending', 'pending']);
    expect((await t.daemon.store.domains.dkimSelectors(d.id)).sort()).toEqual([ed.host.split('.')[0], rsa!.host.split('.')[0]].sort());
  });

  it('is verified only once both DKIM records are published: the RSA one alone is not enough, nor the ed25519 one', async () => {
    const d = await create();
    const { domainKeyActive: ed, domainKeyActiveCompanion: rsa } = d.dnsRecords;
    publishAll(dns, { ...d.dnsRecords, domainKeyActive: rsa! , domainKeyActiveCompanion: undefined });
    let v = await verify(d.id);
    expect([v.verified, v.dnsRecords.domainKeyActive.status, v.dnsRecords.domainKeyActiveCompanion?.status]).toEqual([false, 'failed', 'verified']);
    dns.remove(rsa!.host);
    publish(dns, ed);
    v = await verify(d.id);
    expect([v.verified, v.dnsRecords.domainKeyActive.status, v.dnsRecords.domainKeyActiveCompanion?.status]).toEqual([false, 'verified', 'failing']);
    publish(dns, rsa!);
    v = await verify(d.id);
    expect([v.verified, v.dnsRecords.domainKeyActive.status, v.dnsRecords.domainKeyActiveCompanion?.status]).toEqual([true, 'verified', 'verified']);
    expect(await t.daemon.store.domains.signingKey({ accountId: t.accountId, domainName: d.name })).toMatchObject({ algorithm: 'ed25519', rsaCompanion: { algorithm: 'rsa', selector: rsa!.host.split('.')[0] } });
  });

  it('rotates to a new pair: both pending records listed, promoted together once both are published, the old pair retired', async () => {
    const d = await create();
    publishAll(dns, d.dnsRecords);
    expect((await verify(d.id)).verified).toBe(true);
    const rotated = await t.api('POST', `/domains/${d.id}/rotate-key`);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.body.value).toMatch(/k=ed25519/);
    expect(rotated.body.rsaCompanion.value).toMatch(/k=rsa/);
    const pending = (await t.api('GET', `/domains/${d.id}`)).body.dnsRecords as DnsRecords;
    expect(pending.domainKeyPendingCompanion).toEqual(rotated.body.rsaCompanion);
    publish(dns, pending.domainKeyPending!);
    let v = await verify(d.id);
    expect(v.dnsRecords.domainKeyActive.host).toBe(d.dnsRecords.domainKeyActive.host);
    expect(v.dnsRecords.domainKeyPending?.status).toBe('verified');
    publish(dns, pending.domainKeyPendingCompanion!);
    v = await verify(d.id);
    expect(v.verified).toBe(true);
    expect(v.dnsRecords.domainKeyPending).toBeNull();
    expect(v.dnsRecords.domainKeyActive.host).toBe(pending.domainKeyPending!.host);
    expect(v.dnsRecords.domainKeyActiveCompanion?.host).toBe(pending.domainKeyPendingCompanion!.host);
    const selectors = [v.dnsRecords.domainKeyActive, v.dnsRecords.domainKeyActiveCompanion!].map((r) => r.host.split('.')[0]);
    expect((await t.daemon.store.domains.dkimSelectors(d.id)).sort()).toEqual(selectors.sort());
    expect((await t.daemon.store.domains.get(d.id))!.retiredKeys.map((k) => k.algorithm)).toEqual(['ed25519', 'rsa']);
  });

  it('stored before companions existed: gets one at its next check, keeps sending on ed25519 meanwhile, signs with both once it is published', async () => {
    const d = await create();
    publishAll(dns, d.dnsRecords);
    expect((await verify(d.id)).verified).toBe(true);
    // As a store written before dual signing holds it: the ed25519 key alone.
    await dropRsaCompanion(t.daemon.store, d.id);
    dns.remove(d.dnsRecords.domainKeyActiveCompanion!.host);
    let v = await verify(d.id);
    const companion = v.dnsRecords.domainKeyActiveCompanion!;
    expect(companion.host).toBe(d.dnsRecords.domainKeyActiveCompanion!.host);
    expect(companion.value).not.toBe(d.dnsRecords.domainKeyActiveCompanion!.value); // a new key
    expect([v.verified, companion.status]).toEqual([true, 'failed']);
    expect((await t.daemon.store.domains.signingKey({ accountId: t.accountId, domainName: d.name }))?.rsaCompanion).toBeUndefined();
    publish(dns, companion);
    v = await verify(d.id);
    expect([v.verified, v.dnsRecords.domainKeyActiveCompanion?.status]).toEqual([true, 'verified']);
    expect((await t.daemon.store.domains.signingKey({ accountId: t.accountId, domainName: d.name }))?.rsaCompanion?.selector).toBe(companion.host.split('.')[0]);
  });

  it('stored before companions existed and never verified: the companion it gets is required, as for a new domain', async () => {
    const d = await create();
    await dropRsaCompanion(t.daemon.store, d.id);
    publishAll(dns, { ...d.dnsRecords, domainKeyActiveCompanion: undefined });
    let v = await verify(d.id);
    expect([v.verified, v.dnsRecords.domainKeyActive.status, v.dnsRecords.domainKeyActiveCompanion?.status]).toEqual([false, 'verified', 'failed']);
    publish(dns, v.dnsRecords.domainKeyActiveCompanion!);
    v = await verify(d.id);
    expect(v.verified).toBe(true);
  });
});

describe.skipIf(!dkimpyAvailable())('mail from an ed25519 domain', () => {
  it('carries an RSA and an ed25519 signature with the same over-signed h=, both valid to dkimpy and to mailauth with the keys in DNS', async () => {
    const s = await setupSender(t, dns, { deliveryType: 'sandbox' });
    expect(s.dnsRecords.domainKeyActiveCompanion).toBeDefined();
    const res = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': s.channelId },
      body: { from: { email: `news@${s.domain}` }, to: [{ email: 'reader@example.org' }], subject: 'Dual', text: 'Hello\n' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const raw = await signedBody(t.daemon.store, res.body.messageId);
    const tags = signatureTags(raw);
    expect(tags.map((x) => x.a)).toEqual(['rsa-sha256', 'ed25519-sha256']);
    expect(tags.map((x) => `${x.s}._domainkey.${x.d}`)).toEqual([s.dnsRecords.domainKeyActiveCompanion!.host, s.dnsRecords.domainKeyActive.host]);
    expect(tags[0].h).toBe(tags[1].h);
    expect(tags[0].h.toLowerCase().split(':').filter((n) => n === 'from')).toHaveLength(2); // over-signed
    const hosts = tags.map((x) => `${x.s}._domainkey.${x.d}`);
    const records = Object.fromEntries(await Promise.all(hosts.map(async (h) => [h, (await lookupTxt(dns, h))[0].join('')] as const)));
    expect(await dkimpyVerifyEach(raw, records)).toEqual(['pass', 'pass']);
    const verdict = await verifyDkim(dns, raw);
    expect(verdict.results.map((r: { status: { result: string } }) => r.status.result)).toEqual(['pass', 'pass']);
  });
});
