/**
 * Bare CR and bare LF in a message submitted over SMTP: delivery sends each as CRLF
 * (delivery/smtp-data.ts), so the message is checked and DKIM-signed with CRLF line ends, and
 * what the receiving MX gets is what was checked and signed: a field hidden behind a bare CR is
 * a field (a Bcc is removed), and the signature verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import { verifyDkim } from '../support/signing.js';
import { SmtpWire } from '../support/smtp-wire.js';
import { waitFor } from '../support/wait.js';

let rig: DeliveryRig;

beforeAll(async () => {
  rig = await startDeliveryRig({ mx: { address: '127.0.47.2', starttls: false }, domains: ['example.net'], daemon: { 'smtp.enabled': true, 'smtp.port': 0 } });
});

afterAll(() => rig?.stop());

/** Submits `message` (sent as it is, bare CRs and LFs included) to ann@example.net; the reply to the final dot. */
async function submit(message: string): Promise<string> {
  const c = await SmtpWire.connect(rig.t.daemon.smtp!.port);
  try {
    expect((await c.login(rig.s.channelId, rig.t.apiKey))?.code).toBe(235);
    expect((await c.cmd(`MAIL FROM:<app@${rig.s.domain}>`))?.code).toBe(250);
    expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
    return (await c.data(message))?.text ?? '(closed)';
  } finally {
    await c.quit();
  }
}

describe('bare CR and LF in SMTP submissions', () => {
  it('delivers what it checked and signed: no Bcc hidden behind a bare CR, a DKIM signature that verifies', async () => {
    const before = rig.mx.received.length;
    const reply = await submit(
      `From: <app@${rig.s.domain}>\r\nTo: <ann@example.net>\r\nSubject: line ends\rBcc: <hidden@example.org>\r\n\r\nbare LF\nbare CR\rend\r\n`,
    );
    expect(reply).toMatch(/^250 2\.0\.0 /);
    await waitFor(() => rig.mx.received.length > before, { what: 'the delivery to the MX' });
    const raw = rig.mx.received[before].raw;
    const text = raw.toString('latin1');
    expect(text).not.toMatch(/^Bcc:/im);
    expect(text).toContain('\r\nSubject: line ends\r\n');
    expect(text).toMatch(/\r\n\r\nbare LF\r\nbare CR\r\nend\r\n$/);
    const dkim = await verifyDkim(rig.dns, raw);
    expect(dkim.results.map((r) => [r.signingDomain, r.status.result])).toEqual([[rig.s.domain, 'pass']]);
  });
});
