/**
 * postrider init: writes the configuration of a production install, so that it cannot be half
 * done. The three settings every install must get right are asked for (or defaulted) and checked
 * before anything is written:
 *  - hostname: a fully qualified public name (every domain's MX and SPF records, and EHLO, name
 *    it; RFC 5321 4.1.1.1 wants the FQDN in EHLO), never a single label, an IP literal or a
 *    reserved name (RFC 2606/6761), which no DNS record can point at;
 *  - publicUrl: where tracking, unsubscribe and dashboard links lead; a loopback URL would send
 *    every recipient to their own machine;
 *  - dataDir: an absolute folder, so that the daemon and every CLI command given this file use
 *    the same store whatever their working folder.
 * The file is then read back through the configuration loader, so what was written is what
 * `serve` will accept. An existing file is kept unless --force.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../config/load.js';
import { normalizeDomainName } from '../domain/domain-name.js';
import { parse, UsageError, type CommandIo } from './args.js';

const DEFAULT_CONFIG = '/etc/postrider/postrider.jsonc';
const DEFAULT_DATA_DIR = '/var/lib/postrider';

const USAGE = `Usage:
  postrider init --hostname NAME [--public-url URL] [--data-dir DIR] [--config PATH] [--force]

Writes the configuration file of a production install (default ${DEFAULT_CONFIG}):
  --hostname    the public, fully qualified name of this host (e.g. mta.acme.org); every domain's
                MX and SPF records point at it and the daemon greets with it
  --public-url  base URL of tracking, unsubscribe and dashboard links (default https://<hostname>)
  --data-dir    absolute folder of the store (default ${DEFAULT_DATA_DIR}, the systemd unit's)
  --config      where to write the file
  --force       replace an existing file
Then start the daemon with --config PATH; every CLI command takes the same --config.`;

export async function initCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values, help } = parse(
    argv,
    { hostname: { type: 'string' }, 'public-url': { type: 'string' }, 'data-dir': { type: 'string' }, config: { type: 'string' }, force: { type: 'boolean' } },
    USAGE,
    0,
  );
  if (help) {
    io.out(USAGE);
    return 0;
  }
  if (!values.hostname) throw new UsageError('--hostname is required (the public name of this host, e.g. mta.acme.org)', USAGE);
  const hostname = publicHostname(values.hostname);
  const publicUrl = publicBaseUrl(values['public-url'] ?? `https://${hostname}`);
  const dataDir = path.resolve(values['data-dir'] ?? DEFAULT_DATA_DIR);
  const file = path.resolve(values.config ?? DEFAULT_CONFIG);
  if (fs.existsSync(file) && !values.force) {
    io.err(`postrider: ${file} exists already; it was left as it is (--force replaces it)`);
    return 73; // EX_CANTCREAT (sysexits.h)
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Written next to its final name and renamed: a failure never leaves half a file behind.
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, render({ hostname, publicUrl, dataDir }), { mode: 0o644 });
  try {
    loadConfig({ configPath: tmp, env: {} });
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.renameSync(tmp, file);
  io.out(nextSteps(file, { hostname, publicUrl, dataDir }));
  return 0;
}

/** A name DNS records can point at: two or more labels, not an IP literal, not reserved. */
function publicHostname(input: string): string {
  const r = normalizeDomainName(input.trim());
  if (!r.ok) throw new ConfigError([`--hostname "${input}" ${r.message}: give the public, fully qualified name of this host (e.g. mta.acme.org)`]);
  return r.name;
}

function publicBaseUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new ConfigError([`--public-url "${input}" is not a URL (e.g. https://mta.acme.org)`]);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ConfigError([`--public-url "${input}" must be an http or https URL`]);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '::1') {
    throw new ConfigError([`--public-url "${input}" is a loopback address: links in mail would lead each recipient to their own machine`]);
  }
  return url.href.replace(/\/$/, '');
}

function render(c: { hostname: string; publicUrl: string; dataDir: string }): string {
  return [
    `// postrider configuration, written by \`postrider init\` on ${new Date().toISOString().slice(0, 10)}.`,
    '// Every other key keeps its default: `postrider config example` lists them all with their',
    '// environment variables, `postrider config print --config <this file>` shows the effective values.',
    '{',
    '  // The public name of this host: EHLO, the MX and SPF targets of every domain (POSTRIDER_HOSTNAME).',
    `  "hostname": ${JSON.stringify(c.hostname)},`,
    '  // Base URL of tracking, unsubscribe and dashboard links (POSTRIDER_PUBLIC_URL).',
    `  "publicUrl": ${JSON.stringify(c.publicUrl)},`,
    '  // The store, generated keys and certificates; owned by the user the daemon runs as (POSTRIDER_DATA_DIR).',
    `  "dataDir": ${JSON.stringify(c.dataDir)}`,
    '}',
    '',
  ].join('\n');
}

function nextSteps(file: string, c: { hostname: string; publicUrl: string; dataDir: string }): string {
  return [
    `wrote ${file}`,
    `  hostname   ${c.hostname}`,
    `  publicUrl  ${c.publicUrl}`,
    `  dataDir    ${c.dataDir}`,
    '',
    'Next:',
    `  1. DNS: an A (and AAAA) record for ${c.hostname}, and its PTR record naming it back.`,
    `  2. Start the daemon: postrider serve --config ${file}  (systemd: docs/operations.md, "systemd")`,
    `  3. The first start prints an API key and writes it to ${path.join(c.dataDir, 'initial-api-key')};`,
    `     the CLI reads the same store: postrider keys list --config ${file}`,
    ...otherDataDir(c.dataDir),
  ].join('\n');
}

/**
 * The systemd unit sets POSTRIDER_DATA_DIR to the default folder, which wins over the file, and
 * its sandbox may write only there: another dataDir needs a drop-in, or the daemon keeps its
 * store in the default folder while the CLI, given this file, looks in the other.
 */
function otherDataDir(dataDir: string): string[] {
  if (dataDir === DEFAULT_DATA_DIR) return [];
  return [
    `  systemd: the unit sets POSTRIDER_DATA_DIR=${DEFAULT_DATA_DIR}, which wins over this file, and may write only there;`,
    `     for ${dataDir} add a drop-in (systemctl edit postrider): [Service] Environment=POSTRIDER_DATA_DIR=${dataDir} and ReadWritePaths=${dataDir}`,
  ];
}
