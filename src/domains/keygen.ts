/**
 * DKIM key generation off the main thread: crypto.generateKeyPair runs in libuv's thread pool,
 * so a 2048-bit RSA key (50-200 ms of CPU) does not stall the HTTP and SMTP listeners. The
 * record format matches workers/dkim.ts, whose generateDkimKey is synchronous.
 */
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import type { DkimAlgorithm } from '../domain/sending-domain.js';

export interface GeneratedDkimKey {
  algorithm: DkimAlgorithm;
  /** PKCS#8 PEM. */
  privateKeyPem: string;
  /** The value of the `<selector>._domainkey.<domain>` TXT record (RFC 6376 3.6.1). */
  dnsValue: string;
}

export type KeyGenerator = (opts: { algorithm: DkimAlgorithm; bits?: number }) => Promise<GeneratedDkimKey>;

const generateKeyPair = promisify(crypto.generateKeyPair);

/** RFC 8301 3.2: RSA signing keys SHOULD be 2048 bits. */
export const RSA_DEFAULT_BITS = 2048;

export const generateDkimKeyAsync: KeyGenerator = async ({ algorithm, bits = RSA_DEFAULT_BITS }) => {
  if (algorithm === 'rsa') {
    const { privateKey, publicKey } = await generateKeyPair('rsa', {
      modulusLength: bits,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'der' },
    });
    // RFC 6376 3.6.1: for k=rsa, p= is the base64 of the DER SubjectPublicKeyInfo.
    return { algorithm, privateKeyPem: privateKey, dnsValue: `v=DKIM1; k=rsa; p=${publicKey.toString('base64')}` };
  }
  const { privateKey, publicKey } = await generateKeyPair('ed25519', {
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'der' },
  });
  // RFC 8463 4.2: for k=ed25519, p= is the raw 32-byte public key, i.e. the SPKI minus its
  // fixed 12-byte prefix (RFC 8410 4).
  if (publicKey.length !== 44) throw new Error(`unexpected ed25519 SPKI length ${publicKey.length}`);
  const raw = publicKey.subarray(12);
  return { algorithm, privateKeyPem: privateKey, dnsValue: `v=DKIM1; k=ed25519; p=${raw.toString('base64')}` };
};

/**
 * The keys of a new signing key: the key itself and, for ed25519, an RSA companion (RFC 8463 3
 * recommends signing with both, as receivers without ed25519 ignore an ed25519 signature).
 * Both are generated concurrently on the thread pool.
 */
export async function generateKeySet(generate: KeyGenerator, algorithm: DkimAlgorithm): Promise<{ key: GeneratedDkimKey; rsaCompanion?: GeneratedDkimKey }> {
  if (algorithm === 'rsa') return { key: await generate({ algorithm }) };
  const [key, rsaCompanion] = await Promise.all([generate({ algorithm }), generate({ algorithm: 'rsa' })]);
  return { key, rsaCompanion };
}
