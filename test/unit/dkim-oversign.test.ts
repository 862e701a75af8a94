/**
 * Over-signing (RFC 6376 8.15), checked by an independent verifier (dkimpy) and by mailauth's
 * verifier: a message signed by DkimSigner verifies, and adding a second copy of a signed field
 * after signing (a From that a mail client would show in place of the signed one) makes it fail.
 * Both, because dkimpy also fails a message with two From fields on its own (RFC 5322 3.6), so
 * for From only mailauth's verdict shows the over-signing.
 */
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { composeMessage } from '../../src/workers/compose.js';
import { DkimSigner, generateDkimKey, splitTxt, type GeneratedKey } from '../../src/workers/dkim.js';
import { dkimpyAvailable, dkimpyVerify, dkimpyVerifyEach } from '../support/dkimpy.js';

const available = dkimpyAvailable();

let key: GeneratedKey;
let signed: Buffer;

/** `field` inserted as a header line of `raw`: first after the DKIM-Signature, or last in the header block. */
function withField(raw: Buffer, field: string, where: 'top' | 'bottom'): Buffer {
  const text = raw.toString('latin1');
  if (where === 'bottom') {
    const end = text.indexOf('\r\n\r\n');
    return Buffer.from(`${text.slice(0, end)}\r\n${field}${text.slice(end)}`, 'latin1');
  }
  const afterSig = text.search(/\r\n(?![ \t])/) + 2;
  return Buffer.from(`${text.slice(0, afterSig)}${field}\r\n${text.slice(afterSig)}`, 'latin1');
}

async function mailauthVerify(message: Buffer, txt: string): Promise<string> {
  const resolver = async (name: string) => {
    if (name !== 'sel1._domainkey.example.com') throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    return [splitTxt(txt)];
  };
  return (await dkimVerify(message, { resolver })).results[0].status.result;
}

describe.skipIf(!available)('DKIM over-signing, verified by dkimpy', () => {
  beforeAll(async () => {
    key = generateDkimKey({ algorithm: 'rsa', bits: 2048 });
    const raw = await composeMessage({
      from: { email: 'news@example.com', name: 'Example News' },
      to: [{ email: 'reader@example.org' }],
      subject: 'Your receipt',
      text: 'Thanks!\n',
      messageId: '<r-1@example.com>',
      date: '2024-05-06T07:08:09.000Z',
    });
    signed = await new DkimSigner().sign({ raw, domain: 'example.com', selector: 'sel1', privateKeyPem: key.privateKeyPem, algorithm: 'rsa' });
  });

  it('passes as signed', async () => {
    expect(await dkimpyVerify(signed, key.dnsValue)).toBe('pass');
    expect(await mailauthVerify(signed, key.dnsValue)).toBe('pass');
  });

  it.each([
    ['a second From above the original', 'From: "Bank" <ceo@bank.example>', 'top'],
    ['a second From below the original', 'From: "Bank" <ceo@bank.example>', 'bottom'],
    ['a second Subject', 'Subject: Urgent: wire the money', 'top'],
    ['a Reply-To the message did not have', 'Reply-To: <thief@evil.example>', 'bottom'],
    ['a List-Unsubscribe the message did not have', 'List-Unsubscribe: <https://evil.example/u>', 'top'],
    ['a Cc ... is allowed: the message had none (Cc is over-signed only where present)', 'Cc: <x@example.org>', 'top'],
  ] as const)('adding %s after signing', async (what, field, where) => {
    const expected = what.startsWith('a Cc') ? 'pass' : 'fail';
    const changed = withField(signed, field, where);
    expect(await dkimpyVerify(changed, key.dnsValue)).toBe(expected);
    expect(await mailauthVerify(changed, key.dnsValue)).toBe(expected);
  });
});

describe.skipIf(!available)('signing with an RSA companion', () => {
  it('puts the RSA signature on top of the ed25519 one, both with the same h= and t=, both valid to dkimpy', async () => {
    const ed = generateDkimKey({ algorithm: 'ed25519' });
    const rsa = generateDkimKey({ algorithm: 'rsa', bits: 2048 });
    const raw = await composeMessage({ from: { email: 'news@example.com' }, to: [{ email: 'r@example.org' }], subject: 'Two', text: 'Hi\n', messageId: '<two@example.com>', date: '2024-05-06T07:08:09.000Z' });
    const out = await new DkimSigner().sign({
      raw, domain: 'example.com', selector: 'sel1', privateKeyPem: ed.privateKeyPem, algorithm: 'ed25519',
      rsaCompanion: { selector: 'sel1rsa', algorithm: 'rsa', privateKeyPem: rsa.privateKeyPem },
    });
    const head = out.toString('latin1').split('\r\n\r\n')[0].replace(/\r\n[ \t]+/g, ' ').split('\r\n');
    const sigs = head.filter((l) => l.startsWith('DKIM-Signature:'));
    expect(head.indexOf(sigs[0])).toBe(0);
    const tag = (l: string, n: string) => new RegExp(`[; ]${n}=([^;]*)`).exec(l)?.[1].replace(/\s+/g, '');
    expect(sigs.map((l) => [tag(l, 'a'), tag(l, 's')])).toEqual([['rsa-sha256', 'sel1rsa'], ['ed25519-sha256', 'sel1']]);
    expect(tag(sigs[0], 'h')).toBe(tag(sigs[1], 'h'));
    expect(tag(sigs[0], 't')).toBe(tag(sigs[1], 't'));
    const records = { 'sel1._domainkey.example.com': ed.dnsValue, 'sel1rsa._domainkey.example.com': rsa.dnsValue };
    expect(await dkimpyVerifyEach(out, records)).toEqual(['pass', 'pass']);
  });
});
