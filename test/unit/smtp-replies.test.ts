import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SMTP_REPLIES, smtpReply } from '../../src/smtp/replies.js';

function smtpSection(): string {
  return fs.readFileSync(new URL('../../docs/smtp-submission.md', import.meta.url), 'utf8');
}

describe('the SMTP reply table', () => {
  it('documents every reply of the listener in docs/smtp-submission.md', () => {
    const section = smtpSection();
    const missing = Object.entries(SMTP_REPLIES).filter(([, r]) => !section.includes(`\`${r.code} ${r.enhanced}\``)).map(([name]) => name);
    expect(missing).toEqual([]);
  });

  it('puts the enhanced code in front of the text, and a detail after it', () => {
    expect(smtpReply('messageTooLarge', 'the limit is 10 bytes')).toMatchObject({ responseCode: 552, message: '5.3.4 Message exceeds the maximum size: the limit is 10 bytes' });
    expect(smtpReply('shuttingDown').message).toBe('4.3.2 Service shutting down, try again later');
  });
});
