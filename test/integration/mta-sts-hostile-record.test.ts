/**
 * A recipient domain whose `_mta-sts` TXT record holds a field of 60,000 spaces (issue 29, item
 * 4), through the real daemon: API, dispatcher, resolver (the record arrives over TCP, joined from
 * 236 character-strings) and MTA-STS lookup. Before, every attempt parsed the record again on the
 * main thread with a trim that took seconds on it: five messages to the domain took 10.7 s and
 * delayed mail to every other domain. The record is invalid (RFC 8461 3.1: an sts-ext-value has
 * no spaces), so the domain has no MTA-STS policy and its mail goes out as without one; the
 * policy its host would serve (enforce, naming another MX) is never fetched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stsRecordId } from '../../src/mta-sts/txt.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startPolicyServer, stsDeliverySettings, type PolicyServer } from '../support/mta-sts-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import type { Attempt } from '../support/attempts.js';
import { waitFor } from '../support/wait.js';

const HOSTILE = 'spacious-mail.net';
const CONTROL = 'plain-mail.net';
const MX = 'mx.shared-mail.net';

let dns: TestDns;
let policies: PolicyServer;
let mx: MxServer;
let t: TestDaemon;
let s: Sender;

beforeAll(async () => {
  dns = await startDnsServer();
  policies = await startPolicyServer();
  mx = await startMxServer({ address: '127.0.42.2', tlsOptions: policies.issue(MX) });
  dns.set(MX, 'A', ['127.0.42.2']);
  for (const domain of [HOSTILE, CONTROL]) dns.set(domain, 'MX', [`10 ${MX}`]);
  dns.set(`_mta-sts.${HOSTILE}`, 'TXT', [`v=STSv1; id=wide1; ext=a${' '.repeat(60_000)}b;`]);
  dns.set(`mta-sts.${HOSTILE}`, 'A', ['127.0.0.1']);
  policies.answer(`mta-sts.${HOSTILE}`, ['version: STSv1', 'mode: enforce', 'mx: mail.elsewhere-mail.net', 'max_age: 86400', ''].join('\r\n'));
  t = await startDaemon(stsDeliverySettings(dns.address, policies, mx.port));
  s = await setupSender(t, dns);
});

afterAll(async () => {
  await t?.stop();
  await Promise.all([mx?.close(), policies?.close(), dns?.close()]);
});

async function send(to: string): Promise<string> {
  const res = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `app@${s.domain}` }, to: [{ email: to }], subject: 'Hostile record', text: 'Hello' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId as string;
}

async function attempts(id: string): Promise<Attempt[]> {
  return ((await t.api('GET', `/activity/messages/${id}`)).body.attempts as Attempt[] | undefined) ?? [];
}

describe('a recipient domain whose _mta-sts record holds a field of 60,000 spaces', () => {
  it('is treated as having no MTA-STS policy, and mail to it and to another domain is delivered', async () => {
    const recipients = [...[1, 2, 3, 4, 5].map((n) => `user${n}@${HOSTILE}`), `user@${CONTROL}`];
    const ids = await Promise.all(recipients.map(send));
    await waitFor(() => mx.received.length >= recipients.length, { what: 'all six messages at the MX', timeout: 15_000 });
    expect(mx.received.flatMap((m) => m.to).sort()).toEqual([...recipients].sort());

    for (const id of ids) {
      // The MX has the message once it answered 250; the attempt is recorded after that answer.
      const [first] = await waitFor(async () => {
        const a = await attempts(id);
        return a.length > 0 && a;
      }, { what: `the attempt of ${id} recorded` });
      expect(first).toMatchObject({ outcome: 'delivered', mx: MX, tls: true });
      expect(first.mtaSts).toBeUndefined();
    }
    expect(policies.requests.get(`mta-sts.${HOSTILE}`)).toBeUndefined();
    // The record did arrive (no DNS failure): the delivery resolver holds its reading, no id.
    expect(await t.daemon.deliveryDns.txtParsed(`_mta-sts.${HOSTILE}`, 'mta-sts', stsRecordId)).toMatchObject({ status: 'ok', records: null });
  });
});
