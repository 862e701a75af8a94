import { describe, expect, it } from 'vitest';
import { MAX_REPLY_SCAN, strippedTextReply } from '../../src/inbound/stripped-reply.js';

describe('strippedTextReply', () => {
  it('keeps the text above a Gmail attribution and drops the quote under it', () => {
    const text = 'Thanks, that works.\n\nAnn\n\nOn Mon, 6 May 2024 at 10:00, Support <support@example.com> wrote:\n> Try turning it off and on.\n> \n> Support\n';
    expect(strippedTextReply(text)).toBe('Thanks, that works.\n\nAnn');
  });

  it('finds an attribution wrapped over two lines', () => {
    const text = 'Yes please.\r\n\r\nOn Mon, May 6, 2024 at 10:00 AM Support Team of Example Corporation <\r\nsupport@example.com> wrote:\r\n\r\n> Shall we?\r\n';
    expect(strippedTextReply(text)).toBe('Yes please.');
  });

  it('cuts at Outlook\'s "Original Message" line and at its rule followed by a From line', () => {
    expect(strippedTextReply('New text\n\n-----Original Message-----\nFrom: a@b.c\nSubject: x\n\nold')).toBe('New text');
    expect(strippedTextReply('New text\n\n________________________________\nFrom: Support <s@example.com>\nSent: Monday\n\nold')).toBe('New text');
  });

  it('keeps a rule of underscores that no From line follows', () => {
    expect(strippedTextReply('Total\n__________\n42')).toBe('Total\n__________\n42');
  });

  it('recognizes German, French and Spanish attributions', () => {
    expect(strippedTextReply('Danke!\n\nAm 06.05.2024 um 10:00 schrieb Support <s@example.com>:\n> alt')).toBe('Danke!');
    expect(strippedTextReply('Merci !\n\nLe lun. 6 mai 2024 à 10:00, Support <s@example.com> a écrit :\n> ancien')).toBe('Merci !');
    expect(strippedTextReply('¡Gracias!\n\nEl lun, 6 may 2024 a las 10:00, Support (<s@example.com>) escribió:\n> viejo')).toBe('¡Gracias!');
  });

  it('drops quoted lines between the answers of an inline reply and keeps the answers', () => {
    const text = '> Does it work?\nYes.\n> And the other one?\n>> nested quote\nNot yet.\n';
    expect(strippedTextReply(text)).toBe('Yes.\nNot yet.');
  });

  it('gives a message that quotes nothing back without its trailing white space', () => {
    expect(strippedTextReply('Hello,\n\nnon-ASCII stays: grüße, 日本語\n\n\n')).toBe('Hello,\n\nnon-ASCII stays: grüße, 日本語');
  });

  it('is empty for a reply that is all quote, and for no text', () => {
    expect(strippedTextReply('On Mon, 6 May 2024, Ann wrote:\n> hi')).toBe('');
    expect(strippedTextReply('')).toBe('');
  });

  it('does not take a sentence that merely starts with "On" and ends elsewhere for an attribution', () => {
    expect(strippedTextReply('On Monday we ship.\nThe team wrote: great')).toBe('On Monday we ship.\nThe team wrote: great');
  });

  it(`looks at the first MAX_REPLY_SCAN characters only, cut at a line break`, () => {
    const line = 'new text line\n';
    const long = line.repeat(Math.ceil((MAX_REPLY_SCAN * 2) / line.length));
    const stripped = strippedTextReply(long);
    expect(stripped.length).toBeLessThanOrEqual(MAX_REPLY_SCAN);
    expect(stripped.length).toBeGreaterThan(MAX_REPLY_SCAN - line.length * 2);
    expect(stripped.endsWith('new text line')).toBe(true);
  });

  it('takes time linear in the text for long lines and long runs of white space', () => {
    const hostile = `On ${'x '.repeat(200_000)}\n${' '.repeat(200_000)}x\n${'On '.repeat(100_000)}\n`;
    const started = performance.now();
    expect(strippedTextReply(hostile).length).toBeGreaterThan(0);
    expect(performance.now() - started).toBeLessThan(250);
  });
});
