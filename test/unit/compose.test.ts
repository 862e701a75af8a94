import { simpleParser, type AddressObject } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { composeMessage, type ComposeInput } from '../../src/workers/compose.js';

const base: ComposeInput = {
  from: { email: 'sender@example.com', name: 'Postrider Sender' },
  to: [{ email: 'alice@example.org', name: 'Alice' }, { email: 'bob@example.org' }],
  subject: 'Hello',
  text: 'Plain body',
  messageId: '<4b0c8f2e-8a4c-4a57-9d0e-3f1f1c2b7a10@example.com>',
  date: '2024-03-05T07:08:09.000Z',
};

/** The header section, unfolded (RFC 5322 2.2.3), as [name, value] pairs in order. */
function headerFields(raw: Buffer): Array<[string, string]> {
  const text = raw.toString('latin1');
  const head = text.slice(0, text.indexOf('\r\n\r\n'));
  return head
    .replace(/\r\n(?=[ \t])/g, '')
    .split('\r\n')
    .map((line) => {
      const i = line.indexOf(':');
      return [line.slice(0, i), line.slice(i + 1).trim()] as [string, string];
    });
}

function field(raw: Buffer, name: string): string | undefined {
  return headerFields(raw).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
}

function addresses(obj: AddressObject | AddressObject[] | undefined): Array<{ address?: string; name: string }> {
  return [obj ?? []].flat().flatMap((o) => o.value.map((v) => ({ address: v.address, name: v.name })));
}

describe('composeMessage', () => {
  it('writes From with its name, To, Cc, Reply-To and custom headers, and no Bcc', async () => {
    const raw = await composeMessage({
      ...base,
      cc: [{ email: 'carol@example.org', name: 'Carol, Jr.' }],
      replyTo: [{ email: 'replies@example.com', name: 'Replies' }],
      headers: { 'X-Campaign': 'spring-2024', 'X-Entity-Ref-ID': 'abc123' },
    });
    const names = headerFields(raw).map(([k]) => k.toLowerCase());
    expect(names).not.toContain('bcc');
    expect(field(raw, 'From')).toBe('Postrider Sender <sender@example.com>');
    expect(field(raw, 'X-Campaign')).toBe('spring-2024');
    expect(field(raw, 'X-Entity-Ref-ID')).toBe('abc123');
    expect(field(raw, 'MIME-Version')).toBe('1.0');

    const parsed = await simpleParser(raw);
    expect(addresses(parsed.from)).toEqual([{ address: 'sender@example.com', name: 'Postrider Sender' }]);
    expect(addresses(parsed.to)).toEqual([
      { address: 'alice@example.org', name: 'Alice' },
      { address: 'bob@example.org', name: '' },
    ]);
    expect(addresses(parsed.cc)).toEqual([{ address: 'carol@example.org', name: 'Carol, Jr.' }]);
    expect(addresses(parsed.replyTo)).toEqual([{ address: 'replies@example.com', name: 'Replies' }]);
    expect(parsed.bcc).toBeUndefined();
  });

  it('uses the given Message-ID and Date instead of inventing its own', async () => {
    const raw = await composeMessage(base);
    expect(headerFields(raw).filter(([k]) => k.toLowerCase() === 'message-id')).toEqual([['Message-ID', base.messageId]]);
    // RFC 5322 3.3 date-time of the same instant as the ISO input.
    expect(field(raw, 'Date')).toBe('Tue, 05 Mar 2024 07:08:09 +0000');
    const parsed = await simpleParser(raw);
    expect(parsed.messageId).toBe(base.messageId);
    expect(parsed.date?.toISOString()).toBe(base.date);
  });

  it('encodes a non-ASCII subject as an RFC 2047 UTF-8 encoded-word', async () => {
    const subject = 'Grüße aus Köln – 50% Rabatt 🎉';
    const raw = await composeMessage({ ...base, subject });
    expect(field(raw, 'Subject')).toMatch(/^=\?UTF-8\?[QB]\?/);
    expect(raw.toString('latin1')).not.toContain('Grüße');
    expect((await simpleParser(raw)).subject).toBe(subject);
  });

  it('cannot be made to write extra header lines through the subject', async () => {
    const raw = await composeMessage({ ...base, subject: 'Hi\r\nBcc: victim@example.net' });
    expect(headerFields(raw).map(([k]) => k.toLowerCase())).not.toContain('bcc');
    expect((await simpleParser(raw)).subject).toBe('Hi Bcc: victim@example.net');
  });

  it('builds multipart/alternative with text first and html last when both are given', async () => {
    const raw = await composeMessage({ ...base, text: 'Plain ümlaut', html: '<p>Rich <b>ümlaut</b></p>' });
    expect(field(raw, 'Content-Type')).toMatch(/^multipart\/alternative; boundary=/);
    const body = raw.toString('latin1');
    expect(body.indexOf('Content-Type: text/plain')).toBeGreaterThan(0);
    expect(body.indexOf('Content-Type: text/plain')).toBeLessThan(body.indexOf('Content-Type: text/html'));
    const parsed = await simpleParser(raw);
    expect(parsed.text?.trim()).toBe('Plain ümlaut');
    expect(parsed.html).toBe('<p>Rich <b>ümlaut</b></p>');
  });

  it('uses a single text/plain part when only text is given', async () => {
    const raw = await composeMessage(base);
    expect(field(raw, 'Content-Type')).toMatch(/^text\/plain/);
  });

  it('emits CRLF line ends only, even when the content has bare LF', async () => {
    const raw = await composeMessage({ ...base, text: 'line 1\nline 2\n', html: '<p>a</p>\n<p>b</p>' });
    const text = raw.toString('latin1');
    expect(text).toContain('\r\n');
    expect(text).not.toMatch(/[^\r]\n/);
    expect(text).not.toMatch(/\r[^\n]/);
  });

  it('round-trips an attachment: content, file name and content type', async () => {
    const content = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256));
    const raw = await composeMessage({
      ...base,
      html: '<p>see attached</p>',
      attachments: [{ content: content.toString('base64'), fileName: 'data file.bin', contentType: 'application/octet-stream' }],
    });
    expect(field(raw, 'Content-Type')).toMatch(/^multipart\/mixed/);
    const parsed = await simpleParser(raw);
    expect(parsed.attachments).toHaveLength(1);
    const [att] = parsed.attachments;
    expect(att.filename).toBe('data file.bin');
    expect(att.contentType).toBe('application/octet-stream');
    expect(att.contentDisposition).toBe('attachment');
    expect(Buffer.compare(att.content, content)).toBe(0);
  });

  it('puts an inline attachment with a content id into multipart/related next to the html', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const raw = await composeMessage({
      ...base,
      html: '<img src="cid:logo@postrider">',
      attachments: [{ content: png.toString('base64'), fileName: 'logo.png', contentId: 'logo@postrider', disposition: 'inline' }],
    });
    const body = raw.toString('latin1');
    expect(body).toMatch(/Content-Type: multipart\/related; type="text\/html"/);
    expect(body).toContain('Content-ID: <logo@postrider>');
    expect(body).toMatch(/Content-Disposition: inline; filename=logo\.png/);
    const parsed = await simpleParser(raw, { keepCidLinks: true });
    const [att] = parsed.attachments;
    expect(att.cid).toBe('logo@postrider');
    expect(att.related).toBe(true);
    expect(Buffer.compare(att.content, png)).toBe(0);
  });

  it('adds List-Unsubscribe with both URIs and List-Unsubscribe-Post for an https URL', async () => {
    const raw = await composeMessage({
      ...base,
      listUnsubscribe: { url: 'https://mail.example.com/u/abc?t=1', mailto: 'mailto:unsub@example.com?subject=abc' },
    });
    expect(field(raw, 'List-Unsubscribe')).toBe('<https://mail.example.com/u/abc?t=1>, <mailto:unsub@example.com?subject=abc>');
    expect(field(raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
  });

  it('leaves List-Unsubscribe-Post out when the unsubscribe URL is not https (RFC 8058 3.1)', async () => {
    const raw = await composeMessage({ ...base, listUnsubscribe: { url: 'http://127.0.0.1:8080/u/abc' } });
    expect(field(raw, 'List-Unsubscribe')).toBe('<http://127.0.0.1:8080/u/abc>');
    expect(field(raw, 'List-Unsubscribe-Post')).toBeUndefined();
  });

  it('writes no List-Unsubscribe fields when none is asked for', async () => {
    const raw = await composeMessage(base);
    const names = headerFields(raw).map(([k]) => k.toLowerCase());
    expect(names).not.toContain('list-unsubscribe');
    expect(names).not.toContain('list-unsubscribe-post');
  });

  it('percent-encodes characters of the unsubscribe URL that would break the angle brackets', async () => {
    const raw = await composeMessage({ ...base, listUnsubscribe: { url: 'https://example.com/u?a=<x> y' } });
    expect(field(raw, 'List-Unsubscribe')).toBe('<https://example.com/u?a=%3Cx%3E%20y>');
  });

  it('does not let a custom header replace From or Subject', async () => {
    const raw = await composeMessage({ ...base, headers: { From: 'evil@example.net', Subject: 'spoof' } });
    expect(headerFields(raw).filter(([k]) => k.toLowerCase() === 'from')).toEqual([['From', 'Postrider Sender <sender@example.com>']]);
    expect(headerFields(raw).filter(([k]) => k.toLowerCase() === 'subject')).toEqual([['Subject', 'Hello']]);
  });
});
