/**
 * The MTA-STS texts: the policy file (RFC 8461 3.2), the MX matching rule (RFC 8461 4.1) and
 * the _mta-sts TXT record (RFC 8461 3.1).
 */
import { describe, expect, it } from 'vitest';
import { MAX_AGE_LIMIT, MAX_POLICY_BYTES, mxAllowed, parsePolicy } from '../../src/mta-sts/policy.js';
import { MAX_RECORD_LENGTH, stsRecordId } from '../../src/mta-sts/txt.js';

const ENFORCE = 'version: STSv1\r\nmode: enforce\r\nmx: mail.shop-mail.net\r\nmx: *.backup-mx.org\r\nmax_age: 86400\r\n';

describe('parsePolicy', () => {
  it('reads version, mode, every mx and max_age, with CRLF or LF lines', () => {
    const crlf = parsePolicy(ENFORCE);
    expect(crlf).toEqual({ ok: true, policy: { mode: 'enforce', mx: ['mail.shop-mail.net', '*.backup-mx.org'], maxAge: 86400 } });
    expect(parsePolicy(ENFORCE.replace(/\r\n/g, '\n'))).toEqual(crlf);
  });

  it('ignores unknown keys, white space after the colon and the case of mx names; the first of a repeated key counts', () => {
    const text = 'version:STSv1\nmode:   testing  \nfuture_key: x\nmx: MX1.Shop-Mail.NET.\nmax_age: 600\nmode: enforce\n';
    expect(parsePolicy(text)).toEqual({ ok: true, policy: { mode: 'testing', mx: ['mx1.shop-mail.net'], maxAge: 600 } });
  });

  it('lowers a max_age above one year to one year', () => {
    const r = parsePolicy('version: STSv1\nmode: none\nmax_age: 9999999999\n');
    expect(r.ok && r.policy.maxAge).toBe(MAX_AGE_LIMIT);
  });

  it.each([
    ['a wrong version', 'version: STSv2\nmode: enforce\nmx: a.shop-mail.net\nmax_age: 1\n', /version/],
    ['no version', 'mode: enforce\nmx: a.shop-mail.net\nmax_age: 1\n', /version/],
    ['an unknown mode', 'version: STSv1\nmode: strict\nmx: a.shop-mail.net\nmax_age: 1\n', /mode/],
    ['mode in upper case', 'version: STSv1\nmode: ENFORCE\nmx: a.shop-mail.net\nmax_age: 1\n', /mode/],
    ['no max_age', 'version: STSv1\nmode: enforce\nmx: a.shop-mail.net\n', /max_age/],
    ['a negative max_age', 'version: STSv1\nmode: enforce\nmx: a.shop-mail.net\nmax_age: -5\n', /max_age/],
    ['an 11-digit max_age', 'version: STSv1\nmode: enforce\nmx: a.shop-mail.net\nmax_age: 12345678901\n', /max_age/],
    ['an enforce policy without mx', 'version: STSv1\nmode: enforce\nmax_age: 1\n', /without mx/],
    ['a wildcard inside a name', 'version: STSv1\nmode: enforce\nmx: mail.*.shop-mail.net\nmax_age: 1\n', /mx/],
    ['a line without colon', 'version: STSv1\nmode enforce\nmx: a.shop-mail.net\nmax_age: 1\n', /key: value/],
    ['an HTML page', '<html><body>hello</body></html>', /key: value/],
  ])('refuses %s', (_what, text, error) => {
    const r = parsePolicy(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(error);
  });

  it('reads a policy whose lines carry long runs of white space, trimming only SP and HTAB, in linear time', () => {
    // The old /^[ \t]+|[ \t]+$/g trim rescanned the run from every position inside it (issue 29).
    const pad = ' \t'.repeat(5_000);
    const text = `version:${pad}STSv1${pad}\nmode: testing${pad}\nmx:${pad}mx1.shop-mail.net${pad}\r\nmax_age: 600\n`;
    expect(parsePolicy(text)).toEqual({ ok: true, policy: { mode: 'testing', mx: ['mx1.shop-mail.net'], maxAge: 600 } });
    const inside = parsePolicy(`version: STSv1\nmode: testing\nmx: mx1.shop${' '.repeat(20_000)}-mail.net\nmax_age: 600\n`);
    expect(inside.ok).toBe(false);
    if (!inside.ok) expect(inside.error).toMatch(/^mx "mx1\.shop {10}/);
  });

  it('refuses a text longer than 64 KiB, whoever hands it over', () => {
    const text = `version: STSv1\nmode: none\nmax_age: 86400\n${'x: y\n'.repeat(MAX_POLICY_BYTES / 5)}`;
    expect(text.length).toBeGreaterThan(MAX_POLICY_BYTES);
    expect(parsePolicy(text)).toEqual({ ok: false, error: `the policy is longer than ${MAX_POLICY_BYTES} characters` });
    expect(parsePolicy(text.slice(0, MAX_POLICY_BYTES - 1)).ok).toBe(true);
  });

  it('accepts a none policy without mx', () => {
    expect(parsePolicy('version: STSv1\nmode: none\nmax_age: 86400\n')).toEqual({ ok: true, policy: { mode: 'none', mx: [], maxAge: 86400 } });
  });
});

describe('mxAllowed', () => {
  const policy = { mx: ['mail.shop-mail.net', '*.backup-mx.org'] };

  it('allows an MX equal to a pattern, in any case and with the root dot', () => {
    expect(mxAllowed(policy, 'mail.shop-mail.net')).toBe(true);
    expect(mxAllowed(policy, 'MAIL.Shop-Mail.net.')).toBe(true);
    expect(mxAllowed(policy, 'mail2.shop-mail.net')).toBe(false);
    expect(mxAllowed(policy, 'shop-mail.net')).toBe(false);
  });

  it('lets a wildcard stand for exactly one label', () => {
    expect(mxAllowed(policy, 'mx1.backup-mx.org')).toBe(true);
    expect(mxAllowed(policy, 'backup-mx.org')).toBe(false);
    expect(mxAllowed(policy, 'a.mx1.backup-mx.org')).toBe(false);
    expect(mxAllowed(policy, 'mx1.evilbackup-mx.org')).toBe(false);
    expect(mxAllowed(policy, '.backup-mx.org')).toBe(false);
  });

  it('allows nothing under a policy without mx', () => {
    expect(mxAllowed({ mx: [] }, 'mail.shop-mail.net')).toBe(false);
  });
});

describe('stsRecordId', () => {
  it('reads the id of the one STSv1 record, skipping other TXT records', () => {
    expect(stsRecordId(['v=spf1 -all', 'v=STSv1; id=20240101T000000;'])).toBe('20240101T000000');
    expect(stsRecordId(['v=STSv1;id=abc'])).toBe('abc');
    expect(stsRecordId(['v=STSv1 ;  id=abc  ;  ext=1 ; '])).toBe('abc');
  });

  it('reads a record whose character-strings the resolver joined', () => {
    // "v=STSv1; " + "id=abc123" published as two strings arrives as one joined value.
    expect(stsRecordId(['v=STSv1; ' + 'id=abc123'])).toBe('abc123');
  });

  it.each([
    ['no record', []],
    ['two STSv1 records', ['v=STSv1; id=a1', 'v=STSv1; id=b2']],
    ['no id', ['v=STSv1; ext=1']],
    ['an id of 33 characters', [`v=STSv1; id=${'a'.repeat(33)}`]],
    ['an id with a dash', ['v=STSv1; id=2024-01-01']],
    ['the version alone', ['v=STSv1']],
    ['the version in lower case', ['v=stsv1; id=abc']],
    ['a field without "="', ['v=STSv1; id=abc; junk']],
    ['an empty field', ['v=STSv1;; id=abc']],
    ['an id with a space inside', ['v=STSv1; id=ab c']],
    ['an extension whose value holds spaces (sts-ext-value)', ['v=STSv1; id=abc; ext=a b']],
    ['an extension whose name starts with "_" (sts-ext-name)', ['v=STSv1; id=abc; _ext=1']],
    // Issue 29: 5 messages to this domain held the event loop for 10 s with the old trim.
    ['a field of 60,000 spaces between two characters', [`v=STSv1; id=abc; a${' '.repeat(60_000)}b`]],
    ['a record longer than MAX_RECORD_LENGTH', [`v=STSv1; id=abc; ${'e=1; '.repeat(MAX_RECORD_LENGTH / 5)}`]],
  ])('finds no policy for %s', (_what, records) => {
    expect(stsRecordId(records)).toBeNull();
  });

  it('reads fields with long runs of white space around the ";", in linear time', () => {
    const wsp = ' \t'.repeat(30_000);
    // Too long for MAX_RECORD_LENGTH as a whole; the white space around ";" is sts-field-delim.
    expect(stsRecordId([`v=STSv1${wsp};${wsp}id=abc${wsp};`])).toBeNull();
    const short = ' \t'.repeat(150);
    expect(stsRecordId([`v=STSv1${short};${short}id=abc${short};${short}ext.name-1=a:b<c>${short}`])).toBe('abc');
  });

  it('accepts well-formed extensions beside the id, and the first of two ids', () => {
    expect(stsRecordId(['v=STSv1; ext_1.a-b=x:y<z>~; id=abc; id=def'])).toBe('abc');
  });
});
