/**
 * headerSummary (src/inbound/header-summary.ts): the From address and Subject a received message
 * is listed and filtered by (GET /inbound/messages `from`, `subject`), read as the payload reads
 * them (payload-fields.ts), so the list shows and finds what the route's URL was given.
 */
import { describe, expect, it } from 'vitest';
import { headerSummary } from '../../src/inbound/header-summary.js';
import { inboundPayload } from '../../src/inbound/payload.js';

async function payloadSubject(raw: Buffer): Promise<string | null> {
  const p = await inboundPayload({
    id: 'in_1',
    routeId: 'rt_1',
    receivedAt: new Date(),
    envelope: { mailFrom: '', rcptTo: ['support@inbound.test'] },
    raw,
    auth: { spf: { result: 'none', domain: null }, dkim: [], dmarc: { result: 'none', domain: null, policy: null }, arc: { result: 'none' } },
    mailboxHash: null,
    attachmentInlineMax: 1024,
    attachmentUrl: (i) => `https://postrider.test/a/${i}`,
  });
  return p.subject;
}

describe('headerSummary', () => {
  it('reads the Subject as the payload does: encoded-words decoded, 8-bit UTF-8 read, raw Latin-1 kept letter for letter', async () => {
    const cases = [
      Buffer.from('From: Ann <Ann@Example.org>\r\nSubject: =?UTF-8?B?R3LDvMOfZQ==?= aus\r\n K\u00f6ln\r\n\r\nx\r\n', 'latin1'),
      Buffer.from('From: ann@example.org\r\nSubject: Grüße aus Köln\r\n\r\nx\r\n', 'utf8'),
      Buffer.from('From: ann@example.org\r\nSubject: Gr\xfc\xdfe aus K\xf6ln\r\n\r\nx\r\n', 'latin1'),
      // windows-1252, the "latin1" of WHATWG: 0x80 is the euro sign, 0x96 an en dash.
      Buffer.from('From: ann@example.org\r\nSubject: Rechnung \x96 12 \x80\r\n\r\nx\r\n', 'latin1'),
    ];
    for (const raw of cases) {
      const summary = headerSummary(raw);
      expect(summary.from).toBe('ann@example.org');
      expect(summary.subject).not.toContain('\ufffd');
      expect(summary.subject).toBe(await payloadSubject(raw));
    }
    expect(headerSummary(cases[2]).subject).toBe('Grüße aus Köln');
    expect(headerSummary(cases[3]).subject).toBe('Rechnung – 12 €');
  });
});
