/**
 * An HTTPS MTA-STS policy server for tests (RFC 8461 3.3) with its own test CA, made with
 * openssl. One server on loopback answers for every policy host: the SNI name picks the
 * certificate (one the CA issued for that host, unless the test asks for a self-signed one or
 * one for another name), and the Host header picks the answer the test set for that host.
 * The fetcher trusts the CA through its caFile option (delivery.mtaSts.caFile), never through
 * the process's roots.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { deliverySettings } from './delivery-rig.js';

export interface PolicyAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export type CertKind = 'valid' | 'self-signed' | 'wrong-name';

export interface PolicyServer {
  port: number;
  /** The PEM file of the test CA, for the fetcher's caFile. */
  caFile: string;
  /** What GET /.well-known/mta-sts.txt answers for `host` (mta-sts.<domain>); a policy text means 200 text/plain. */
  answer(host: string, answer: PolicyAnswer | string, cert?: CertKind): void;
  /** Requests received per host. */
  requests: Map<string, number>;
  /** A key and certificate for `name` from the same test CA (for MX hosts checked under enforce). */
  issue(name: string, kind?: CertKind): KeyPair;
  close(): Promise<void>;
}

interface KeyPair {
  key: string;
  cert: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/** The CA and a way to issue certificates, in one temporary folder. */
function testCa(dir: string): { ca: KeyPair; issue: (name: string, kind: CertKind) => KeyPair } {
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=postrider test CA'], dir);
  const read = (f: string): string => fs.readFileSync(path.join(dir, f), 'utf8');
  let n = 0;
  const issue = (name: string, kind: CertKind): KeyPair => {
    const base = `c${n++}`;
    const san = kind === 'wrong-name' ? `DNS:other.${name}` : `DNS:${name}`;
    const subject = ['-subj', `/CN=${kind === 'wrong-name' ? `other.${name}` : name}`, '-addext', `subjectAltName=${san}`];
    if (kind === 'self-signed') {
      openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${base}.key`, '-out', `${base}.pem`, '-days', '2', ...subject], dir);
    } else {
      openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${base}.key`, '-out', `${base}.csr`, ...subject], dir);
      fs.writeFileSync(path.join(dir, `${base}.ext`), `subjectAltName=${san}\n`);
      openssl(['x509', '-req', '-in', `${base}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${base}.pem`, '-days', '2', '-extfile', `${base}.ext`], dir);
    }
    return { key: read(`${base}.key`), cert: read(`${base}.pem`) };
  };
  return { ca: { key: read('ca.key'), cert: read('ca.pem') }, issue };
}

/**
 * A test daemon's settings for delivery under MTA-STS: DNS from the test server at `dnsAddress`,
 * MX hosts on loopback at `mxPort`, policies fetched from `policies` with its test CA trusted
 * (delivery.mtaSts.caFile, which delivery also trusts for the MX certificates `issue` made).
 */
export function stsDeliverySettings(dnsAddress: string, policies: Pick<PolicyServer, 'caFile' | 'port'>, mxPort: number): Record<string, unknown> {
  return {
    ...deliverySettings(dnsAddress, mxPort),
    'delivery.mtaSts.caFile': policies.caFile,
    'delivery.mtaSts.httpsPort': policies.port,
  };
}

export async function startPolicyServer(host = '127.0.0.1'): Promise<PolicyServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-mta-sts-'));
  const { issue } = testCa(dir);
  const answers = new Map<string, PolicyAnswer>();
  const contexts = new Map<string, tls.SecureContext>();
  const requests = new Map<string, number>();
  const fallback = issue('unknown.invalid', 'valid');
  const server = https.createServer({
    key: fallback.key,
    cert: fallback.cert,
    SNICallback: (name, cb) => cb(null, contexts.get(name.toLowerCase()) ?? tls.createSecureContext(fallback)),
  });
  server.on('request', (req, res) => {
    const name = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    requests.set(name, (requests.get(name) ?? 0) + 1);
    const a = answers.get(name);
    if (!a || req.url !== '/.well-known/mta-sts.txt') return void res.writeHead(404).end();
    res.writeHead(a.status ?? 200, { 'content-type': 'text/plain', ...a.headers });
    res.end(a.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    caFile: path.join(dir, 'ca.pem'),
    requests,
    issue: (name, kind = 'valid') => issue(name.toLowerCase(), kind),
    answer(name, answer, cert = 'valid') {
      const key = name.toLowerCase();
      answers.set(key, typeof answer === 'string' ? { body: answer } : answer);
      contexts.set(key, tls.createSecureContext(issue(key, cert)));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
