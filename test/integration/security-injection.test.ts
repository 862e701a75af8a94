/**
 * CR/LF and header injection: every string field of the API that is not free message content
 * (html, text, attachment data) is refused with 422 at its own pointer when it carries a line
 * break or NUL, and values that reach headers through templates come out on one line. A field
 * added to the send schema without a test here fails the coverage check at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedBody } from '../support/signing.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

const INJECTIONS = ['x\r\nBcc: victim@evil.example', 'x\nX-Injected: 1', 'x\rX-Injected: 1', 'x\u0000y'];

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'smtp.enabled': true, 'smtp.port': 0 }));
  s = await setupSender(t, dns, { deliveryType: 'sandbox', verify: false });
});

afterAll(() => stopDaemonWithDns({ t, dns }));

function transactional(): Record<string, any> {
  return {
    from: { email: `app@${s.domain}`, name: 'App' },
    to: [{ email: 'ann@example.net', name: 'Ann' }],
    cc: [{ email: 'cc@example.net', name: 'Cc' }],
    bcc: [{ email: 'bcc@example.net', name: 'Bcc' }],
    replyTo: [{ email: 'reply@example.net', name: 'Reply' }],
    subject: 'Hello',
    text: 'Hi',
    html: '<p>Hi</p>',
    tags: ['t1'],
    headers: { 'X-Custom': 'v' },
    metadata: { k: 'v' },
    attachments: [{ content: Buffer.from('hello').toString('base64'), fileName: 'a.txt', contentType: 'text/plain', contentId: 'c1', disposition: 'attachment' }],
  };
}

function broadcast(): Record<string, any> {
  return {
    from: { email: `app@${s.domain}`, name: 'App' },
    template: { subject: 'Hi {{name}}', text: 'Hello {{name}}' },
    messages: [{ to: [{ email: 'ann@example.net', name: 'Ann' }], headers: { 'X-Custom': 'v' }, metadata: { k: 'v' }, tags: ['t1'], data: { name: 'Ann' } }],
    replyTo: [{ email: 'reply@example.net', name: 'Reply' }],
    headers: { 'X-Custom': 'v' },
    metadata: { k: 'v' },
    tags: ['t1'],
  };
}

/** Sets the value at a JSON pointer (RFC 6901) inside a copy of obj. */
function withValue(obj: Record<string, any>, pointer: string, value: unknown): Record<string, any> {
  const copy = structuredClone(obj);
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let at: any = copy;
  for (const p of parts.slice(0, -1)) at = at[p];
  at[parts[parts.length - 1]] = value;
  return copy;
}

/** Renames the last key of the pointer (for header names and metadata keys). */
function withKey(obj: Record<string, any>, pointer: string, newKey: string): Record<string, any> {
  const copy = structuredClone(obj);
  const parts = pointer.split('/').slice(1);
  let at: any = copy;
  for (const p of parts.slice(0, -1)) at = at[p];
  const last = parts[parts.length - 1];
  const value = at[last];
  delete at[last];
  at[newKey] = value;
  return copy;
}

/** Every string leaf of a body, as JSON pointers. */
function stringPointers(v: unknown, base = ''): string[] {
  if (typeof v === 'string') return [base];
  if (Array.isArray(v)) return v.flatMap((x, i) => stringPointers(x, `${base}/${i}`));
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => stringPointers(x, `${base}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`));
  return [];
}

/** Free content: line breaks are data there, and the MIME encoder keeps them out of headers. */
const CONTENT_FIELDS = new Set(['/text', '/html', '/attachments/0/content', '/template/text', '/template/html', '/messages/0/data/name']);

const SEND = {
  '/send/transactional': transactional,
  '/send/broadcast': broadcast,
} as const;

const covered = new Set<string>();

async function post(path: string, body: unknown) {
  return t.api('POST', path, { headers: { 'x-service-channel-id': s.channelId }, body });
}

describe('line breaks in send fields', () => {
  for (const [path, make] of Object.entries(SEND)) {
    it(`${path}: the untouched body is accepted (the cases below differ only in the injected field)`, async () => {
      const res = await post(path, make());
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    });

    it(`${path}: refuses CR, LF, CRLF and NUL in every string value with 422 at that field`, async () => {
      const pointers = stringPointers(make()).filter((p) => !CONTENT_FIELDS.has(p) && !p.endsWith('/disposition'));
      expect(pointers.length).toBeGreaterThan(5);
      const accepted: string[] = [];
      for (const pointer of pointers) {
        for (const value of INJECTIONS) {
          const res = await post(path, withValue(make(), pointer, value));
          covered.add(`${path} ${pointer}`);
          if (res.status !== 422 || !Object.keys(res.body.errors ?? {}).some((k) => pointer.startsWith(k) || k.startsWith(pointer))) {
            accepted.push(`${pointer} ${JSON.stringify(value)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
          }
        }
      }
      expect(accepted).toEqual([]);
    });

    it(`${path}: refuses line breaks in header names and metadata keys`, async () => {
      const keys = stringPointers(make()).filter((p) => /\/(headers|metadata)\/[^/]+$/.test(p));
      expect(keys.length).toBeGreaterThan(0);
      const accepted: string[] = [];
      for (const pointer of keys) {
        for (const value of INJECTIONS) {
          const res = await post(path, withKey(make(), pointer, value));
          if (res.status !== 422) accepted.push(`${pointer} key ${JSON.stringify(value)} -> ${res.status}`);
        }
      }
      expect(accepted).toEqual([]);
    });
  }

  it('refuses headers that postrider writes itself, in any letter case', async () => {
    for (const name of ['Bcc', 'to', 'FROM', 'Subject', 'Message-ID', 'Content-Type', 'DKIM-Signature', 'Date', 'Return-Path', 'Sender', 'Reply-To', 'MIME-Version', 'Content-Transfer-Encoding']) {
      const res = await post('/send/transactional', { ...transactional(), headers: { [name]: 'victim@evil.example' } });
      expect(res.status, name).toBe(422);
    }
  });

  it('keeps template output on one header line even when the data carries line breaks', async () => {
    const res = await post('/send/transactional', {
      from: { email: `app@${s.domain}` },
      to: [{ email: 'ann@example.net' }],
      template: { subject: 'Order {{{order}}}', text: 'Order {{{order}}}', data: { order: '42\r\nBcc: victim@evil.example\r\nX-Injected: 1' } },
    });
    if (res.status === 422) return; // refusing is fine too
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const raw = (await signedBody(t.daemon.store, res.body.messageId)).toString('latin1');
    const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
    expect(head).not.toMatch(/^(Bcc|X-Injected):/im);
    expect(head).toMatch(/^Subject: [^\r\n]*42/m);
  });
});

describe('line breaks over SMTP', () => {
  it('refuses control characters smuggled into X-Metadata as JSON escapes', async () => {
    for (const value of ['a\\r\\nBcc: victim@evil.example', 'a\\u0000b', 'a\\nb']) {
      for (const json of [`{"k":"${value}"}`, `{"${value}":"v"}`]) {
        const c = await SmtpWire.connect(t.daemon.smtp!.port);
        expect((await c.login(s.channelId, t.apiKey))?.code).toBe(235);
        expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
        expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
        const r = await c.data(`From: <app@${s.domain}>\r\nSubject: s\r\nX-Metadata: ${json}\r\n\r\nbody\r\n`);
        expect(r?.code, `${json}: ${r?.text}`).toBeGreaterThanOrEqual(500);
        await c.quit();
      }
    }
  });
});

describe('line breaks in other resources', () => {
  it('refuses them in channel names (create and update)', async () => {
    for (const value of INJECTIONS) {
      expect((await t.api('POST', '/channels', { body: { name: value } })).status).toBe(422);
      expect((await t.api('PATCH', `/channels/${s.channelId}`, { body: { name: value } })).status).toBe(422);
    }
  });

  it('refuses them in domain names', async () => {
    for (const value of INJECTIONS) expect((await t.api('POST', '/domains', { body: { name: `a${value}.example.com` } })).status).toBe(422);
  });

  it('refuses them in suppression addresses', async () => {
    for (const value of INJECTIONS) {
      const res = await t.api('POST', '/suppressions', { body: { channelId: s.channelId, mailType: 'transactional', emails: [`a${value}@example.net`] } });
      // Either the whole request is refused, or the address is reported as not suppressed.
      if (res.status === 200) expect(res.body.results[0].success).toBe(false);
      else expect(res.status).toBe(422);
    }
  });

  it('refuses them in webhook URLs and header values', async () => {
    const base = { url: 'https://hooks.example.com/postrider', events: ['delivered'] };
    for (const value of INJECTIONS) {
      expect((await t.api('POST', '/webhooks', { body: { ...base, url: `https://hooks.example.com/a${value}` } })).status).toBe(422);
      const header = await t.api('POST', '/webhooks', { body: { ...base, additionalHeaders: [{ name: 'X-Token', value: `t${value}` }] } });
      expect(header.status).toBe(422);
      const headerName = await t.api('POST', '/webhooks', { body: { ...base, additionalHeaders: [{ name: `X${value}`, value: 't' }] } });
      expect(headerName.status).toBe(422);
    }
  });

  it('covered every string field of both send bodies', () => {
    for (const [path, make] of Object.entries(SEND)) {
      for (const p of stringPointers(make())) if (!CONTENT_FIELDS.has(p) && !p.endsWith('/disposition')) expect(covered.has(`${path} ${p}`), `${path} ${p}`).toBe(true);
    }
  });
});

describe('display names', () => {
  // One rule for every display name (from, replyTo, to): accepted and refused alike, and written
  // into the header the same way (RFC 2047 encoded-words for non-ASCII, quoted for specials).
  const NAMES = ['Zoë Ünïcode', '=?utf-8?B?dGVzdA==?=', 'a, b <c@d>', 'x"y', '日本語', '\u2028sep', '😀', 'tab\there', 'x\r\nBcc: v@evil.example'];

  it('follow one rule in from, replyTo and to', async () => {
    for (const name of NAMES) {
      const res = await t.api('POST', '/send/transactional', {
        headers: { 'x-service-channel-id': s.channelId },
        body: { from: { email: `app@${s.domain}`, name }, replyTo: [{ email: 'reply@example.net', name }], to: [{ email: 'ann@example.net', name }], subject: 's', text: 't' },
      });
      const fields = ['/from/name', '/replyTo/0/name', '/to/0/name'];
      if (/[\u0000-\u001f]/.test(name)) {
        expect(res.status, JSON.stringify(name)).toBe(422);
        expect(Object.keys(res.body.errors).sort(), JSON.stringify(name)).toEqual(fields.sort());
        continue;
      }
      expect(res.status, JSON.stringify(name)).toBe(200);
      const head = (await signedBody(t.daemon.store, res.body.messageId)).toString('utf8').split('\r\n\r\n')[0];
      const display = (field: string) => new RegExp(`^${field}: (.*) <[^>]+>$`, 'mi').exec(head)![1];
      expect(display('Reply-To'), JSON.stringify(name)).toBe(display('From'));
      expect(display('To'), JSON.stringify(name)).toBe(display('From'));
    }
  });
});
