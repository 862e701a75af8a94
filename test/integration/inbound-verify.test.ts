/**
 * verifyMessage (src/inbound/verify.ts) on received mail, every lookup answered by the test DNS
 * server through postrider's resolver: DKIM signatures made by an independent signer (dkimpy),
 * SPF for the client address, DMARC with the From domain's policy, and the verdicts a message
 * gets when DNS or the message is broken.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { MAX_DKIM_SIGNATURES } from '../../src/inbound/signature-fields.js';
import { verifyMessage, type VerifyInput } from '../../src/inbound/verify.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { dkimpyAvailable, dkimpySign } from '../support/dkimpy.js';

const DOMAIN = 'example.org';
const SELECTOR = 'sel2024';
const SENDER_IP = '192.0.2.10';
const OTHER_IP = '198.51.100.7';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
const KEY_RECORD = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;

let dns: TestDns;
let resolver: DnsResolver;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns);
});
afterAll(async () => {
  resolver.stop();
  await dns.close();
});

beforeEach(() => {
  dns.set(`${SELECTOR}._domainkey.${DOMAIN}`, 'TXT', [KEY_RECORD]);
  dns.set(DOMAIN, 'TXT', [`v=spf1 ip4:${SENDER_IP} -all`]);
  dns.set(`_dmarc.${DOMAIN}`, 'TXT', ['v=DMARC1; p=reject']);
});
afterEach(() => dns.clear());

function message(o: { from?: string | null; body?: string } = {}): Buffer {
  const from = o.from === undefined ? `Ann Example <ann@${DOMAIN}>` : o.from;
  return Buffer.from(
    [
      ...(from === null ? [] : [`From: ${from}`]),
      'To: support@inbound.test',
      'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=',
      'Date: Mon, 06 May 2024 10:00:00 +0000',
      `Message-ID: <m1@${DOMAIN}>`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: 8bit',
      '',
      o.body ?? 'Hello from Ann, grüße.',
      '',
    ].join('\r\n'),
    'utf8',
  );
}

function verify(raw: Buffer, o: Partial<VerifyInput> = {}) {
  return verifyMessage({ raw, clientAddress: SENDER_IP, helo: `mail.${DOMAIN}`, mailFrom: `ann@${DOMAIN}`, resolver, ...o });
}

/** The message with its body changed after signing (a forwarder's footer, or forgery). */
function tamper(signed: Buffer): Buffer {
  return Buffer.from(signed.toString('utf8').replace('Hello from Ann', 'Hello from Mallory'), 'utf8');
}

describe.skipIf(!dkimpyAvailable())('a message signed by dkimpy', () => {
  it('passes DKIM, SPF and DMARC (p=reject) when sent from the domain\'s address', async () => {
    const signed = await dkimpySign(message(), { domain: DOMAIN, selector: SELECTOR, privateKey: PRIVATE_PEM });
    const auth = await verify(signed);
    expect(auth).toEqual({
      spf: { result: 'pass', domain: DOMAIN },
      dkim: [{ domain: DOMAIN, selector: SELECTOR, result: 'pass' }],
      dmarc: { result: 'pass', domain: DOMAIN, policy: 'reject' },
      arc: { result: 'none' },
    });
  });

  it('fails DKIM once its body is changed, and DMARC passes on aligned SPF alone', async () => {
    const signed = await dkimpySign(message(), { domain: DOMAIN, selector: SELECTOR, privateKey: PRIVATE_PEM });
    const auth = await verify(tamper(signed));
    expect(auth.dkim).toEqual([{ domain: DOMAIN, selector: SELECTOR, result: 'fail' }]);
    expect(auth.dmarc.result).toBe('pass');
  });

  it('fails DKIM once a signed header field is changed', async () => {
    const signed = await dkimpySign(message(), { domain: DOMAIN, selector: SELECTOR, privateKey: PRIVATE_PEM });
    const forged = Buffer.from(signed.toString('utf8').replace(`Message-ID: <m1@${DOMAIN}>`, `Message-ID: <m2@${DOMAIN}>`), 'utf8');
    expect((await verify(forged)).dkim).toEqual([{ domain: DOMAIN, selector: SELECTOR, result: 'fail' }]);
  });

  it('fails DMARC when the body is changed and the client is not in the SPF record', async () => {
    const signed = await dkimpySign(message(), { domain: DOMAIN, selector: SELECTOR, privateKey: PRIVATE_PEM });
    const auth = await verify(tamper(signed), { clientAddress: OTHER_IP });
    expect(auth.spf.result).toBe('fail');
    expect(auth.dkim[0].result).toBe('fail');
    expect(auth.dmarc).toEqual({ result: 'fail', domain: DOMAIN, policy: 'reject' });
  });

  it('passes DMARC on DKIM alone when the client is not in the SPF record', async () => {
    const signed = await dkimpySign(message(), { domain: DOMAIN, selector: SELECTOR, privateKey: PRIVATE_PEM });
    const auth = await verify(signed, { clientAddress: OTHER_IP });
    expect(auth.spf.result).toBe('fail');
    expect(auth.dmarc.result).toBe('pass');
  });

  it('ends as permerror when the key does not exist (NXDOMAIN), and temperror when its lookup fails (SERVFAIL)', async () => {
    const signed = await dkimpySign(message(), { domain: DOMAIN, selector: SELECTOR, privateKey: PRIVATE_PEM });
    dns.remove(`${SELECTOR}._domainkey.${DOMAIN}`);
    expect((await verify(signed)).dkim).toEqual([{ domain: DOMAIN, selector: SELECTOR, result: 'permerror' }]);
    dns.servfail(`${SELECTOR}._domainkey.${DOMAIN}`);
    expect((await verify(signed)).dkim).toEqual([{ domain: DOMAIN, selector: SELECTOR, result: 'temperror' }]);
  });

  it(`verifies the first ${MAX_DKIM_SIGNATURES} of many signatures and looks up no more keys`, async () => {
    const signed = await dkimpySign(message(), { domain: DOMAIN, selector: SELECTOR, privateKey: PRIVATE_PEM });
    const text = signed.toString('utf8');
    const end = text.search(/\r\n(?![ \t])/);
    const many = Buffer.from(`${text.slice(0, end + 2).repeat(200)}${text.slice(end + 2)}`, 'utf8');
    const before = dns.queries.length;
    const auth = await verify(many);
    expect(auth.dkim).toHaveLength(MAX_DKIM_SIGNATURES);
    expect(auth.dkim.every((d) => d.result === 'pass')).toBe(true);
    const keyLookups = dns.queries.slice(before).filter((q) => q.name.endsWith('_domainkey.example.org'));
    expect(keyLookups.length).toBeLessThanOrEqual(MAX_DKIM_SIGNATURES);
  });
});

describe('SPF for the client address', () => {
  it('passes for an address the MAIL FROM domain lists and fails for another', async () => {
    expect((await verify(message())).spf).toEqual({ result: 'pass', domain: DOMAIN });
    expect((await verify(message(), { clientAddress: OTHER_IP })).spf).toEqual({ result: 'fail', domain: DOMAIN });
  });

  it('checks the HELO name when MAIL FROM is empty (RFC 7208 2.4)', async () => {
    dns.set(`mail.${DOMAIN}`, 'TXT', [`v=spf1 ip4:${SENDER_IP} -all`]);
    expect((await verify(message(), { mailFrom: '' })).spf).toEqual({ result: 'pass', domain: `mail.${DOMAIN}` });
  });

  it('is none for a domain without a record, and temperror when its lookup fails', async () => {
    dns.remove(DOMAIN, 'TXT');
    expect((await verify(message())).spf.result).toBe('none');
    dns.servfail(DOMAIN);
    expect((await verify(message())).spf.result).toBe('temperror');
  });

  it('makes no more lookups than the message\'s budget and ends as temperror past it', async () => {
    dns.set(DOMAIN, 'TXT', [`v=spf1 a:a.${DOMAIN} a:b.${DOMAIN} ip4:${SENDER_IP} -all`]);
    const before = dns.queries.length;
    const auth = await verify(message(), { maxLookups: 2 });
    expect(auth.spf.result).toBe('temperror');
    expect(dns.queries.length - before).toBeLessThanOrEqual(2);
  });
});

describe('DMARC', () => {
  it('fails an unsigned message from an address whose domain does not list the client', async () => {
    const auth = await verify(message(), { clientAddress: OTHER_IP });
    expect(auth.dkim).toEqual([]);
    expect(auth.dmarc).toEqual({ result: 'fail', domain: DOMAIN, policy: 'reject' });
  });

  it('is none for a From domain without a DMARC record', async () => {
    dns.remove(`_dmarc.${DOMAIN}`);
    expect((await verify(message())).dmarc).toMatchObject({ result: 'none' });
  });

  it('is permerror for a message without From, or with two addresses in it (RFC 7489 6.6.1)', async () => {
    expect((await verify(message({ from: null }))).dmarc.result).toBe('permerror');
    expect((await verify(message({ from: `ann@${DOMAIN}, eve@evil.test` }))).dmarc.result).toBe('permerror');
  });
});
