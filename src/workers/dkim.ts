/**
 * DKIM (RFC 6376): key generation, message signing and the TXT record helper.
 *
 * Signing goes through dkim-signature.ts (mailauth's canonicalization, our key handling) with
 * keys parsed once per thread by the signer's own DkimKeyCache.
 */
import crypto from 'node:crypto';
import { joinOwned } from './bytes.js';
import { DkimKeyCache } from './dkim-keys.js';
import { hashForSigning, signHashed, type DkimAlgorithm, type HashedMessage } from './dkim-signature.js';
import { TaskError } from './errors.js';

export type { DkimAlgorithm };

export interface GenerateKeyOptions {
  algorithm: DkimAlgorithm;
  /** RSA modulus length; default 2048. */
  bits?: number;
}

export interface GeneratedKey {
  algorithm: DkimAlgorithm;
  /** PKCS#8 PEM. */
  privateKeyPem: string;
  /** The value of the `<selector>._domainkey.<domain>` TXT record (RFC 6376 3.6.1). */
  dnsValue: string;
}

export interface SignInput {
  raw: Buffer | string;
  /** The d= tag: the signing domain. */
  domain: string;
  /** The s= tag: the key is published at `<selector>._domainkey.<domain>`. */
  selector: string;
  privateKeyPem: string;
  algorithm: DkimAlgorithm;
  /**
   * A second key of the same domain, the RSA companion of an ed25519 key (RFC 8463 3): the
   * message gets a signature with each, with the same header list.
   */
  rsaCompanion?: { selector: string; algorithm: 'rsa'; privateKeyPem: string };
}

// RFC 8301 3.2: signers MUST use RSA keys of at least 1024 bits and SHOULD use 2048. Above 4096
// the TXT record and the verification cost grow with no practical gain.
const RSA_MIN_BITS = 1024;
const RSA_MAX_BITS = 4096;
const RSA_DEFAULT_BITS = 2048;

export function generateDkimKey(opts: GenerateKeyOptions): GeneratedKey {
  if (opts.algorithm === 'rsa') {
    const bits = opts.bits ?? RSA_DEFAULT_BITS;
    if (!Number.isInteger(bits) || bits < RSA_MIN_BITS || bits > RSA_MAX_BITS || bits % 8 !== 0) {
      throw new TaskError('validation_failed', `RSA key size must be a multiple of 8 from ${RSA_MIN_BITS} to ${RSA_MAX_BITS} bits`, 'bits');
    }
    const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', {
      modulusLength: bits,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'der' },
    });
    // RFC 6376 3.6.1: for k=rsa, p= is the base64 of the DER SubjectPublicKeyInfo.
    return { algorithm: 'rsa', privateKeyPem: privateKey, dnsValue: `v=DKIM1; k=rsa; p=${publicKey.toString('base64')}` };
  }
  if (opts.algorithm === 'ed25519') {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
    // RFC 8463 4.2: for k=ed25519, p= is the base64 of the raw 32-byte public key, not an SPKI
    // structure. The JWK `x` member is exactly that key (RFC 8037 2), base64url encoded.
    const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
    if (raw.length !== 32) throw new TaskError('internal_error', 'ed25519 public key export did not give 32 bytes');
    const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    return { algorithm: 'ed25519', privateKeyPem, dnsValue: `v=DKIM1; k=ed25519; p=${raw.toString('base64')}` };
  }
  throw new TaskError('validation_failed', `Unknown DKIM key algorithm "${String(opts.algorithm)}"`, 'algorithm');
}

/**
 * Header fields to sign: mailauth's default list plus List-Unsubscribe-Post, which RFC 8058 4
 * requires to be covered by the signature together with List-Unsubscribe, and the TLS-RPT
 * report fields, which RFC 8460 5.3 says SHOULD be signed. Every occurrence in the message is
 * signed, none when it has none; OVERSIGNED below adds one more.
 */
export const SIGNED_HEADERS = [
  'From', 'Sender', 'Reply-To', 'Subject', 'Date', 'Message-ID', 'To', 'Cc',
  'MIME-Version', 'Content-Type', 'Content-Transfer-Encoding', 'Content-ID', 'Content-Description',
  'Resent-Date', 'Resent-From', 'Resent-Sender', 'Resent-To', 'Resent-Cc', 'Resent-Message-ID',
  'In-Reply-To', 'References',
  'List-Id', 'List-Help', 'List-Unsubscribe', 'List-Unsubscribe-Post', 'List-Subscribe', 'List-Post',
  'List-Owner', 'List-Archive', 'BIMI-Selector',
  'TLS-Report-Domain', 'TLS-Report-Submitter',
] as const;

const HEADER_LIST = SIGNED_HEADERS.join(':');

type SignedHeader = (typeof SIGNED_HEADERS)[number];

/**
 * Over-signed fields (RFC 6376 8.15): listed in h= once more than the message has them, so
 * nobody can add a second From (which many MUAs display instead of the signed one), a Subject,
 * a List-Unsubscribe pointing elsewhere, ... after signing without breaking the signature.
 * Absent ones are listed once, so they cannot be added either. Cc only where the message has
 * one, and the TLS-RPT fields only in a report (no other message lists them in h=). Each is in
 * SIGNED_HEADERS: an over-signed name whose fields were not signed would fail.
 */
export const OVERSIGNED: readonly SignedHeader[] = [
  'From', 'To', 'Subject', 'Date', 'Message-ID', 'MIME-Version', 'Content-Type',
  'List-Unsubscribe', 'List-Unsubscribe-Post', 'Reply-To',
];
export const OVERSIGNED_WHEN_PRESENT: readonly SignedHeader[] = ['Cc', 'TLS-Report-Domain', 'TLS-Report-Submitter'];

/** Signs messages; one per worker thread, which owns the parsed keys. */
export class DkimSigner {
  constructor(readonly keys: DkimKeyCache = new DkimKeyCache()) {}

  /**
   * Signs the message and returns it with the new DKIM-Signature field prepended. Existing
   * DKIM-Signature fields are kept below it (a message may carry several, RFC 6376 4.2); they
   * are not in the signed header list, so adding one does not break another. With an RSA
   * companion, both signatures are made over the same message at the same second; RFC 8463
   * orders them in no way, and the RSA one goes on top: a verifier that looks only at the first
   * signature (some do, to bound their work) then meets the one every verifier understands.
   */
  async sign(input: SignInput): Promise<Buffer> {
    const raw = typeof input.raw === 'string' ? Buffer.from(input.raw) : input.raw;
    // The t= value mailauth writes by default (the current second, rounded).
    const signTime = new Date(Math.round(Date.now() / 1000) * 1000);
    // One parse and body hash serves both signatures (same canonicalization and hash).
    const hashed = await hashForSigning(raw).catch((err: unknown) => {
      throw signingFailure(`${input.selector}._domainkey.${input.domain}`, err);
    });
    const own = this.signature(hashed, input, input.domain, signTime);
    const companion = input.rsaCompanion && this.signature(hashed, input.rsaCompanion, input.domain, signTime);
    return joinOwned(companion ? [companion, own, raw] : [own, raw]);
  }

  /** One DKIM-Signature field with its CRLF; hashed is null for a message without a header/body separator. */
  private signature(hashed: HashedMessage | null, key: Pick<SignInput, 'selector' | 'algorithm' | 'privateKeyPem'>, domain: string, signTime: Date): string {
    const where = `${key.selector}._domainkey.${domain}`;
    let header: string | null;
    try {
      header = hashed && signHashed(hashed, {
        domain,
        selector: key.selector,
        algorithm: key.algorithm,
        key: this.keys.get(key.privateKeyPem),
        headerList: HEADER_LIST,
        oversign: OVERSIGNED,
        oversignPresent: OVERSIGNED_WHEN_PRESENT,
        signTime,
      });
    } catch (err) {
      throw signingFailure(where, err);
    }
    if (!header) throw new TaskError('internal_error', `DKIM signing for ${where} failed: no signature was produced`);
    return header.trim() + '\r\n';
  }
}

function signingFailure(where: string, err: unknown): TaskError {
  const reason = err instanceof Error ? err.message : String(err);
  return new TaskError('internal_error', `DKIM signing for ${where} failed: ${reason}`, undefined, { cause: err });
}

/**
 * Splits a TXT record value into character-strings of at most 255 bytes (RFC 1035 3.3.14: a
 * character-string is a length octet followed by that many octets). DNS servers and APIs need a
 * long value, such as an RSA-2048 DKIM key, as several strings; verifiers concatenate them
 * without separator (RFC 6376 3.6.2.2). Never splits inside a UTF-8 sequence.
 */
export function splitTxt(value: string, max = 255): string[] {
  const chunks: string[] = [];
  let current = '';
  let bytes = 0;
  for (const char of value) {
    const size = Buffer.byteLength(char);
    if (bytes + size > max) {
      chunks.push(current);
      current = '';
      bytes = 0;
    }
    current += char;
    bytes += size;
  }
  chunks.push(current);
  return chunks;
}
