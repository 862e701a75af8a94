/**
 * A fresh self-signed certificate for test SMTP servers, made with openssl (EC P-256: fast).
 * smtp-server's built-in certificate has expired; never rely on it. One per test process.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCert {
  key: string;
  cert: string;
}

let cached: TestCert | undefined;

export function testCert(): TestCert {
  if (cached) return cached;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-cert-'));
  try {
    const keyFile = path.join(dir, 'key.pem');
    const certFile = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=mx.example.test', '-addext', 'subjectAltName=DNS:*.example.test'],
      { stdio: 'ignore' },
    );
    cached = { key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8') };
    return cached;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
