/**
 * TLS material for the SMTP listener: the operator's certificate (smtp.tlsCert/tlsKey), or a
 * self-signed one generated on first start into <dataDir>/tls. smtp-server's built-in test
 * certificate has expired and must never be used, so the listener always gets one from here.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface TlsMaterial {
  key: string;
  cert: string;
  /** Where it came from, for logs. */
  source: string;
}

/**
 * Whether the PEM certificate names `hostname`: as a DNS name (checkHost: its subjectAltName), or
 * as its CN, which is how generate() below writes a hostname that is an IP literal. False when
 * the file cannot be read as a certificate (made again then, too).
 */
function namesHost(pem: string, hostname: string): boolean {
  try {
    const x = new X509Certificate(pem);
    return x.checkHost(hostname) !== undefined || x.subject.split('\n').includes(`CN=${hostname}`);
  } catch {
    return false;
  }
}

export async function loadTls(opts: { dataDir: string; certFile: string; keyFile: string; hostname: string }): Promise<TlsMaterial> {
  if (opts.certFile && opts.keyFile) {
    return { cert: fs.readFileSync(opts.certFile, 'utf8'), key: fs.readFileSync(opts.keyFile, 'utf8'), source: opts.certFile };
  }
  const dir = path.join(opts.dataDir, 'tls');
  const certFile = path.join(dir, 'smtp-selfsigned.crt');
  const keyFile = path.join(dir, 'smtp-selfsigned.key');
  if (fs.existsSync(certFile) && fs.existsSync(keyFile)) {
    const cert = fs.readFileSync(certFile, 'utf8');
    // Issue 30: a certificate made for the hostname of the first start (CN=vm) outlived a change
    // of `hostname`, so clients that check the name (RFC 6125 6.4, as Python's and Node's
    // default contexts do) refused it for good. Only this file, which postrider generated, is
    // made again; an operator's smtp.tlsCert is returned above untouched.
    if (namesHost(cert, opts.hostname)) return { cert, key: fs.readFileSync(keyFile, 'utf8'), source: certFile };
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Imported here, on a first start only: selfsigned loads @peculiar/x509 and its crypto
  // polyfills, about 0.3 s of module loading that every later start would wait for.
  const { default: selfsigned } = await import('selfsigned');
  const pems = await selfsigned.generate([{ name: 'commonName', value: opts.hostname }], {
    days: 3650,
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: opts.hostname }] }],
  } as Parameters<typeof selfsigned.generate>[1]);
  // The key first: after a crash between the two writes the old certificate is still there and
  // still names another host, so the next start makes the pair again.
  fs.writeFileSync(keyFile, pems.private, { mode: 0o600 });
  fs.writeFileSync(certFile, pems.cert, { mode: 0o644 });
  return { cert: pems.cert, key: pems.private, source: `${certFile} (self-signed, generated)` };
}
