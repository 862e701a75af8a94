/** headerFieldsOf: the header block of a stored message as the message details show it. */
import { describe, expect, it } from 'vitest';
import { headerFieldsOf } from '../../src/activity/queries.js';

describe('headerFieldsOf', () => {
  it('lists the fields in order, unfolded, with UTF-8 values (RFC 6532) and encoded words as written', () => {
    const raw = Buffer.from(
      'Received: from client (client [192.0.2.7])\r\n\tby mx.grove-mail.net with ESMTPSA;\r\n Tue, 24 Nov 2026 08:00:00 +0000\r\n' +
        'From: Zoë <zoe@grove-mail.net>\r\nSubject: =?UTF-8?B?SMOpbGxv?=\r\n\r\nBody: not a header\r\n',
      'utf8',
    );
    expect(headerFieldsOf(raw)).toEqual([
      { name: 'Received', value: 'from client (client [192.0.2.7])\tby mx.grove-mail.net with ESMTPSA; Tue, 24 Nov 2026 08:00:00 +0000' },
      { name: 'From', value: 'Zoë <zoe@grove-mail.net>' },
      { name: 'Subject', value: '=?UTF-8?B?SMOpbGxv?=' },
    ]);
  });

  it('reads a message without a blank line only as far as its bound', () => {
    const raw = Buffer.from('X-A: 1\r\n' + 'X-B: '.padEnd(400_000, 'b'), 'latin1');
    const fields = headerFieldsOf(raw);
    expect(fields[0]).toEqual({ name: 'X-A', value: '1' });
    expect(fields[1].value.length).toBeLessThan(300_000);
  });
});
