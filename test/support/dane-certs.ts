/**
 * Certificates for DANE tests, made with openssl (EC P-256): a CA, a leaf for mx.dane-mail.net
 * signed by it, and a second CA that signed nothing we present (a wrong trust anchor).
 * Generated once per test process into memory.
 */
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface DaneCerts {
  /** PEM */
  caCert: string;
  otherCaCert: string;
  leafCert: string;
  leafKey: string;
  ca: X509Certificate;
  otherCa: X509Certificate;
  leaf: X509Certificate;
}

export const DANE_MX = 'mx.dane-mail.net';
let cached: DaneCerts | undefined;

export function daneCerts(): DaneCerts {
  if (cached) return cached;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-dane-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore', cwd: dir });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    for (const ca of ['ca', 'other-ca']) {
      openssl('req', '-x509', ...ec, '-keyout', file(`${ca}.key`), '-out', file(`${ca}.pem`), '-days', '2', '-subj', `/CN=${ca} test`,
        '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
    }
    openssl('req', ...ec, '-keyout', file('leaf.key'), '-out', file('leaf.csr'), '-subj', `/CN=${DANE_MX}`);
    fs.writeFileSync(file('leaf.ext'), `subjectAltName=DNS:${DANE_MX}\nbasicConstraints=CA:FALSE\n`);
    openssl('x509', '-req', '-in', file('leaf.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial',
      '-out', file('leaf.pem'), '-days', '2', '-extfile', file('leaf.ext'));
    const read = (name: string) => fs.readFileSync(file(name), 'utf8');
    cached = {
      caCert: read('ca.pem'),
      otherCaCert: read('other-ca.pem'),
      leafCert: read('leaf.pem'),
      leafKey: read('leaf.key'),
      ca: new X509Certificate(read('ca.pem')),
      otherCa: new X509Certificate(read('other-ca.pem')),
      leaf: new X509Certificate(read('leaf.pem')),
    };
    return cached;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The association data a server operator would publish for `cert` (RFC 6698 2.1): the whole
 * certificate (selector 0) or its SubjectPublicKeyInfo (1), as is (matching type 0) or hashed
 * with SHA-256 (1) or SHA-512 (2).
 */
export function tlsaData(selector: number, matchingType: number, cert: X509Certificate): Buffer {
  const selected = selector === 0 ? cert.raw : cert.publicKey.export({ type: 'spki', format: 'der' });
  return matchingType === 0 ? selected : createHash(matchingType === 1 ? 'sha256' : 'sha512').update(selected).digest();
}

/** The TLSA record for `cert` in presentation form, as the test DNS server serves it. */
export function tlsaText(usage: number, selector: number, matchingType: number, cert: X509Certificate): string {
  return `${usage} ${selector} ${matchingType} ${tlsaData(selector, matchingType, cert).toString('hex')}`;
}
