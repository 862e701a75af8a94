/**
 * DKIM key records (RFC 6376 3.6): where they live, how their selectors are named, and whether
 * a published TXT value carries the key we expect.
 */

/** RFC 6376 3.6.2.1: the key of selector s for domain d is the TXT record at s._domainkey.d. */
export function dkimHost(selector: string, domain: string): string {
  return `${selector}._domainkey.${domain}`;
}

/**
 * "pr" + UTC year and month + a random suffix, e.g. pr202611a1b2: the date tells operators how
 * old a key is, the suffix makes every key's selector distinct. `random` is lower-case hex.
 */
export function makeSelector(at: Date, random: string): string {
  const month = String(at.getUTCMonth() + 1).padStart(2, '0');
  return `pr${at.getUTCFullYear()}${month}${random}`;
}

/**
 * The selector of an ed25519 key's RSA companion (RFC 8463 3): the key's own selector plus "rsa",
 * e.g. pr202611a1b2rsa, so the pair reads as one in DNS. makeSelector's selectors end in a hex
 * digit, so a companion's never equals one of them, and each key has at most one companion.
 */
export function companionSelector(selector: string): string {
  return `${selector}rsa`;
}

/**
 * Parses a tag-list (RFC 6376 3.2): `tag=value` pairs separated by ";", whitespace around tags
 * and values ignored. Returns null when the text is not a tag-list (a pair without "=", an
 * invalid tag name, or a tag given twice, which 3.2 forbids).
 */
export function parseTagList(text: string): Map<string, string> | null {
  const tags = new Map<string, string>();
  for (const part of text.split(';')) {
    if (part.trim() === '') continue; // a trailing ";" is allowed
    const eq = part.indexOf('=');
    if (eq < 0) return null;
    const name = part.slice(0, eq).trim();
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(name) || tags.has(name)) return null;
    tags.set(name, part.slice(eq + 1).trim());
  }
  return tags;
}

/**
 * True when the published TXT value carries the same key as the expected one: same key type
 * (k=, default rsa) and the same public key data (p=, whitespace ignored, as FWS may be folded
 * into it). A v= tag, if present, must be DKIM1; an empty p= is a revoked key and never matches.
 */
export function dkimRecordMatches(published: string, expected: string): boolean {
  const got = parseTagList(published);
  const want = parseTagList(expected);
  if (!got || !want) return false;
  if (got.has('v') && got.get('v') !== 'DKIM1') return false;
  const keyType = (tags: Map<string, string>) => (tags.get('k') ?? 'rsa').toLowerCase();
  const keyData = (tags: Map<string, string>) => (tags.get('p') ?? '').replace(/\s+/g, '');
  return keyType(got) === keyType(want) && keyData(got) !== '' && keyData(got) === keyData(want);
}
