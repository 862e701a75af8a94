/**
 * An HTTPS TLS-RPT report receiver for tests (RFC 8460 5.4) with its own test CA, made with
 * openssl: one loopback server, a certificate per host name picked by SNI, POSTs recorded per
 * host with their content type and body. The poster trusts the CA through tlsRpt.caFile.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

export interface ReceivedReport {
  host: string;
  path: string;
  contentType: string;
  body: Buffer;
}

export interface ReportServer {
  port: number;
  caFile: string;
  /** Issues a certificate for `host` (valid unless selfSigned) and answers its POSTs with `status`. */
  serve(host: string, status?: number, selfSigned?: boolean): void;
  received: ReceivedReport[];
  close(): Promise<void>;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function issuer(dir: string): (name: string, selfSigned: boolean) => { key: string; cert: string } {
  openssl(['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=postrider tls-rpt test CA'], dir);
  let n = 0;
  return (name, selfSigned) => {
    const b = `c${n++}`;
    const subject = ['-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`];
    if (selfSigned) {
      openssl(['req', '-x509', ...EC, '-keyout', `${b}.key`, '-out', `${b}.pem`, '-days', '2', ...subject], dir);
    } else {
      openssl(['req', '-new', ...EC, '-keyout', `${b}.key`, '-out', `${b}.csr`, ...subject], dir);
      fs.writeFileSync(path.join(dir, `${b}.ext`), `subjectAltName=DNS:${name}\n`);
      openssl(['x509', '-req', '-in', `${b}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${b}.pem`, '-days', '2', '-extfile', `${b}.ext`], dir);
    }
    return { key: fs.readFileSync(path.join(dir, `${b}.key`), 'utf8'), cert: fs.readFileSync(path.join(dir, `${b}.pem`), 'utf8') };
  };
}

export async function startReportServer(): Promise<ReportServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-tls-rpt-'));
  const issue = issuer(dir);
  const fallback = issue('unknown.invalid', false);
  const contexts = new Map<string, tls.SecureContext>();
  const statuses = new Map<string, number>();
  const received: ReceivedReport[] = [];
  const server = https.createServer({ ...fallback, SNICallback: (name, cb) => cb(null, contexts.get(name.toLowerCase()) ?? tls.createSecureContext(fallback)) });
  server.on('request', (req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST') received.push({ host, path: req.url ?? '', contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks) });
      res.writeHead(statuses.get(host) ?? 404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    caFile: path.join(dir, 'ca.pem'),
    received,
    serve(host, status = 200, selfSigned = false) {
      statuses.set(host, status);
      contexts.set(host, tls.createSecureContext(issue(host, selfSigned)));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
