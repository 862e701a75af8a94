/**
 * `postmaster@` a routed domain on the inbound listener (RFC 5321 4.5.1: an SMTP server MUST
 * accept mail for the reserved mailbox postmaster, local part case-insensitive, at every domain it
 * provides mail service for). Over real SMTP on loopback, to a webhook receiver on loopback: the
 * normal lookup first (an exact postmaster route, then the catch-all), else the domain's oldest
 * enabled route gets it, with the normal payload; a domain whose routes are all disabled (or that
 * has none) still refuses it with 550 5.1.1 (no relay); and `RCPT TO:<postmaster>` without a
 * domain is refused with the same 550 5.1.1, not a syntax error.
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newChannel, newVerifiedDomain, uniqueName } from '../support/domains.js';
import { SmtpWire } from '../support/smtp-wire.js';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let t: TestDaemon;
let dns: TestDns;
let receiver: WebhookReceiver;
let channelId: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  ({ t, dns } = await startDaemonWithDns({ 'inbound.enabled': true, 'inbound.port': 0, 'webhooks.allowHttp': true, 'webhooks.allowPrivate': true }));
  channelId = await newChannel(t);
}, 60_000);

afterAll(async () => {
  await stopDaemonWithDns({ t, dns });
  await receiver?.close();
});

/** A verified domain of its own per test: which routes a domain has is what each test is about. */
async function freshDomain(): Promise<string> {
  return (await newVerifiedDomain(t, dns, { name: uniqueName('pm'), channelIds: [channelId] })).name;
}

/** A route whose URL is a path of its own on the receiver (the path names the route). */
async function route(address: string, o: { enabled?: boolean } = {}): Promise<{ id: string; path: string }> {
  const path = `/${address.replace(/[^a-z0-9]/gi, '_')}`;
  const res = await t.api('POST', '/inbound/routes', { body: { channelId, address, url: receiver.url(path), ...o } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // The next route a millisecond later: which is oldest is what the tests are about (ties go by id).
  await waitFor(() => Date.now() > Date.parse(res.body.createdAt), { what: `the clock past ${res.body.createdAt}` });
  return { id: res.body.id, path };
}

/** Sends over SMTP; resolves with the listener's reply, rejects with its refusal. */
async function send(to: string, subject: string): Promise<string> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.inbound!.port, secure: false, ignoreTLS: true });
  try {
    return (await transport.sendMail({ envelope: { from: 'reporter@example.org', to: [to] }, from: 'reporter@example.org', to, subject, text: 'Your server sends spam.' })).response;
  } finally {
    transport.close();
  }
}

/** The one POST the route's URL got. */
const postedTo = (path: string) => waitFor(() => receiver.at(path)[0], { what: `a POST to ${path}`, timeout: 20_000 });

const refusal = { responseCode: 550, response: expect.stringMatching(/^550 5\.1\.1 /) };

describe('postmaster@ a routed domain (RFC 5321 4.5.1)', () => {
  it("goes to the domain's oldest enabled route when neither a postmaster route nor a catch-all exists", async () => {
    const d = await freshDomain();
    // Older than support@ but disabled: a disabled route receives nothing, postmaster mail neither.
    await route(`old@${d}`, { enabled: false });
    const support = await route(`support@${d}`);
    const sales = await route(`sales@${d}`);
    expect(await send(`postmaster@${d}`, 'Abuse report')).toMatch(/^250/);
    const req = await postedTo(support.path);
    expect(req.json).toMatchObject({ routeId: support.id, envelope: { mailFrom: 'reporter@example.org', rcptTo: [`postmaster@${d}`] }, subject: 'Abuse report', mailboxHash: null });
    expect(receiver.at(sales.path)).toEqual([]);
  });

  it('takes Postmaster@ in any case: the local part is case-insensitive', async () => {
    const d = await freshDomain();
    const support = await route(`support@${d}`);
    expect(await send(`PostMaster@${d.toUpperCase()}`, 'Upper case')).toMatch(/^250/);
    // The envelope keeps the local part as written, the domain normalized (as for every recipient).
    expect((await postedTo(support.path)).json).toMatchObject({ routeId: support.id, envelope: { rcptTo: [`PostMaster@${d}`] }, subject: 'Upper case' });
  });

  it("goes to the domain's catch-all when it has one", async () => {
    const d = await freshDomain();
    const support = await route(`support@${d}`);
    const all = await route(`*@${d}`);
    await send(`postmaster@${d}`, 'To the catch-all');
    expect((await postedTo(all.path)).json).toMatchObject({ routeId: all.id, envelope: { rcptTo: [`postmaster@${d}`] } });
    expect(receiver.at(support.path)).toEqual([]);
  });

  it('goes to an exact postmaster route when there is one', async () => {
    const d = await freshDomain();
    const support = await route(`support@${d}`);
    await route(`*@${d}`);
    const pm = await route(`postmaster@${d}`);
    await send(`postmaster@${d}`, 'To the postmaster route');
    expect((await postedTo(pm.path)).json).toMatchObject({ routeId: pm.id, subject: 'To the postmaster route' });
    expect(receiver.at(support.path)).toEqual([]);
  });

  it('is not refused by a disabled postmaster route: the oldest enabled route gets it', async () => {
    const d = await freshDomain();
    const support = await route(`support@${d}`);
    const pm = await route(`postmaster@${d}`, { enabled: false });
    expect(await send(`postmaster@${d}`, 'Route switched off')).toMatch(/^250/);
    expect((await postedTo(support.path)).json).toMatchObject({ routeId: support.id, envelope: { rcptTo: [`postmaster@${d}`] } });
    expect(receiver.at(pm.path)).toEqual([]);
  });

  it('is refused with 550 5.1.1 on a domain whose routes are all disabled, and on a domain without routes (no relay)', async () => {
    const d = await freshDomain();
    await route(`support@${d}`, { enabled: false });
    await route(`*@${d}`, { enabled: false });
    await expect(send(`postmaster@${d}`, 'Nobody home')).rejects.toMatchObject(refusal);
    await expect(send(`postmaster@${await freshDomain()}`, 'No routes')).rejects.toMatchObject(refusal);
    await expect(send('postmaster@elsewhere.example', 'Relay probe')).rejects.toMatchObject(refusal);
  });

  it('refuses RCPT TO:<postmaster> without a domain with 550 5.1.1, not a syntax error', async () => {
    const c = await SmtpWire.connect(t.daemon.inbound!.port);
    try {
      await c.reply();
      await c.cmd('EHLO reporter.example.org');
      expect((await c.cmd('MAIL FROM:<>'))!.code).toBe(250);
      expect((await c.cmd('RCPT TO:<postmaster>'))!.text).toMatch(/^550 5\.1\.1 /);
      expect((await c.cmd('RCPT TO:<Postmaster>'))!.text).toMatch(/^550 5\.1\.1 /);
    } finally {
      await c.quit();
    }
  });
});
