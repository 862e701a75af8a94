/**
 * A message submitted over SMTP that the fast path of raw-content.ts does not read and that is
 * over PARSE_HERE_MAX_BYTES is read for activity by mailparser on a worker thread (the pool's
 * rawContent task, submission-tasks.ts), with a copy of its bytes: what activity shows is what
 * mailparser reads, and the message stored and signed is the one sent, whole (a message of a MiB
 * and more crosses to the finishing stage's thread and back handed over, not cloned).
 */
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARSE_HERE_MAX_BYTES } from '../../src/submission/raw-content.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { signedBody } from '../support/signing.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'smtp.enabled': true, 'smtp.port': 0 }));
  s = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('a large SMTP-submitted message with attachments', () => {
  it('is read for activity on a worker thread and stored whole', async () => {
    // Over PARSE_HERE_MAX_BYTES, and over a MiB: copied for the thread in parts, and handed to
    // the finishing stage's thread and back rather than cloned (workers/pool.ts, worker.ts).
    const pdf = Buffer.alloc(Math.max(3 * PARSE_HERE_MAX_BYTES, 1_500_000));
    for (let i = 0; i < pdf.length; i++) pdf[i] = (i * 31) & 0xff;
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.smtp!.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, auth: { user: s.channelId, pass: t.apiKey } } as Parameters<typeof nodemailer.createTransport>[0]);
    const info = await transport.sendMail({
      from: `App <app@${s.domain}>`,
      to: 'Ann <ann@example.net>',
      subject: 'Your invoice',
      text: 'Attached.',
      html: '<p>Attached.</p>',
      attachments: [{ filename: 'invoice.pdf', content: pdf, contentType: 'application/pdf' }],
    });
    transport.close();
    const id = /queued as ([0-9a-f-]{36})/.exec(info.response)![1];
    const m = (await t.daemon.store.messages.get(id))!;
    expect(m).toMatchObject({
      subject: 'Your invoice',
      to: [{ email: 'ann@example.net', name: 'Ann' }],
      text: 'Attached.',
      html: '<p>Attached.</p>',
      attachments: [{ fileName: 'invoice.pdf', size: pdf.length, contentType: 'application/pdf', disposition: 'attachment' }],
    });
    const signed = await signedBody(t.daemon.store, id);
    const parsed = await simpleParser(signed);
    expect(parsed.attachments.map((a) => [a.filename, a.content.equals(pdf)])).toEqual([['invoice.pdf', true]]);
  });
});
