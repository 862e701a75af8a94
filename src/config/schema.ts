/**
 * The configuration schema: every key postrider understands, its default, its environment
 * variable and its documentation, in one table. The loader (load.ts) validates a config file and
 * the environment against this table once at start; `postrider config print` shows the result
 * and config/postrider.example.jsonc documents the same keys.
 */
import os from 'node:os';
import { parseDuration } from '../domain/duration.js';
import { parseRetrySchedule } from '../domain/retry.js';

export interface Config {
  dataDir: string;
  hostname: string;
  publicUrl: string;
  log: { level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent' };
  http: { host: string; port: number; bodyLimit: number; trustProxy: boolean };
  api: { rateLimit: number; rateWindowMs: number; authFailureLimit: number };
  smtp: {
    enabled: boolean;
    host: string;
    port: number;
    implicitTlsPort: number;
    tlsCert: string;
    tlsKey: string;
    maxMessageSize: number;
    authFailureLimit: number;
    authFailuresPerAddress: number;
    maxConnections: number;
    maxConnectionsPerAddress: number;
    authenticatedReserve: number;
    authTimeoutMs: number;
    idleTimeoutMs: number;
  };
  dns: { servers: string[]; timeoutMs: number };
  delivery: {
    enabled: boolean;
    port: number;
    rate: number;
    allowPrivate: boolean;
    perDomainConcurrency: number;
    retrySchedule: string;
    maxAgeMs: number;
  };
  domains: { dkimAlgorithm: 'rsa' | 'ed25519'; recheckIntervalMs: number; returnPathLabel: string; trackingLabel: string; unsubscribeLabel: string };
  limits: { channelsPerAccount: number; domainsPerAccount: number; pendingSendLimit: number; broadcastMessages: number };
  policy: { denyRecipients: string[] };
  workers: { threads: number };
  retention: { days: number };
  shutdown: { graceMs: number };
  metrics: { token: string };
  inbound: { enabled: boolean; host: string; port: number };
  webhooks: {
    allowHttp: boolean;
    allowPrivate: boolean;
    retryBaseMs: number;
    maxAgeMs: number;
    timeoutMs: number;
    concurrency: number;
    maxPerAccount: number;
  };
}

export interface KeyDef {
  /** Dotted path into Config, e.g. "http.port". */
  path: string;
  doc: string;
  default: () => unknown;
  /** Parses a value from a config file (JSON value) or from an environment variable (string). */
  parse: (raw: unknown) => unknown;
}

// ---------- value parsers: each throws a message that names what was expected ----------

function str(opts: { oneOf?: readonly string[]; allowEmpty?: boolean } = {}) {
  return (raw: unknown): string => {
    if (typeof raw !== 'string') throw new Error('must be a string');
    if (!opts.allowEmpty && raw.trim() === '') throw new Error('must not be empty');
    if (opts.oneOf && !opts.oneOf.includes(raw)) throw new Error(`must be one of ${opts.oneOf.join(', ')}`);
    return raw;
  };
}

function int(min: number, max: number) {
  return (raw: unknown): number => {
    const n = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
    if (typeof n !== 'number' || !Number.isInteger(n)) throw new Error('must be an integer');
    if (n < min || n > max) throw new Error(`must be between ${min} and ${max}`);
    return n;
  };
}

function bool(raw: unknown): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'string' && /^(true|1|yes|on)$/i.test(raw)) return true;
  if (typeof raw === 'string' && /^(false|0|no|off)$/i.test(raw)) return false;
  throw new Error('must be a boolean (true/false)');
}

function list(item: (s: string) => string = (s) => s) {
  return (raw: unknown): string[] => {
    const items =
      typeof raw === 'string'
        ? raw.split(',').map((s) => s.trim()).filter(Boolean)
        : Array.isArray(raw) && raw.every((s) => typeof s === 'string')
          ? (raw as string[])
          : null;
    if (!items) throw new Error('must be a list of strings (or a comma-separated string)');
    return items.map(item);
  };
}

function duration(min: number) {
  return (raw: unknown): number => {
    const ms = typeof raw === 'number' ? raw : typeof raw === 'string' ? parseDuration(raw) : NaN;
    if (!Number.isFinite(ms)) throw new Error('must be a duration such as "30s", "5m", "6h"');
    if (ms < min) throw new Error(`must be at least ${min} ms`);
    return ms;
  };
}

function url(raw: unknown): string {
  const s = str()(raw);
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new Error('must be an absolute URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('must be an http or https URL');
  return s.replace(/\/+$/, '');
}

/** An absolute URL, or empty for "derive it" (domain/public-url.ts). */
function optionalUrl(raw: unknown): string {
  return typeof raw === 'string' && raw.trim() === '' ? '' : url(raw);
}

function hostname(raw: unknown): string {
  const s = str()(raw);
  // RFC 5321 4.1.2: the EHLO argument is a domain (or an address literal, which we do not want).
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(s)) {
    throw new Error('must be a host name (letters, digits, hyphens, dots)');
  }
  return s.toLowerCase();
}

function dnsLabel(raw: unknown): string {
  const s = str()(raw);
  // RFC 1035 2.3.1: one LDH label of at most 63 characters.
  if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(s)) throw new Error('must be one DNS label (letters, digits, inner hyphens)');
  return s.toLowerCase();
}

function dnsServer(s: string): string {
  // ip, ip:port, or [ipv6]:port; the resolver checks addresses again when it starts.
  if (!/^(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9a-f:.]+\](:\d{1,5})?|[0-9a-f:]+)$/i.test(s)) {
    throw new Error(`"${s}" is not ip, ip:port or [ipv6]:port`);
  }
  return s;
}

/** Validated here so a bad schedule stops the start (the step at fault is named); kept as text. */
function retrySchedule(raw: unknown): string {
  const s = str()(raw);
  parseRetrySchedule(s);
  return s.trim();
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const MB = 1024 * 1024;

export const SCHEMA: readonly KeyDef[] = [
  { path: 'dataDir', doc: 'Folder holding the LMDB environment, generated keys and certificates.', default: () => './data', parse: str() },
  { path: 'hostname', doc: 'Name announced in EHLO/HELO and the SMTP greeting; also the default return-path host.', default: () => safeHostname(), parse: hostname },
  {
    path: 'publicUrl',
    doc: 'Base URL under which tracking, unsubscribe and error links are served; empty: http://<http.host>:<port the HTTP API listens on> (hostname for a wildcard http.host).',
    default: () => '',
    parse: optionalUrl,
  },
  { path: 'log.level', doc: 'pino log level.', default: () => 'info', parse: str({ oneOf: LOG_LEVELS }) },
  { path: 'http.host', doc: 'Address the HTTP API listens on.', default: () => '127.0.0.1', parse: str() },
  { path: 'http.port', doc: 'Port of the HTTP API (0 picks a free port).', default: () => 8080, parse: int(0, 65535) },
  { path: 'http.bodyLimit', doc: 'Largest accepted request body in bytes (attachments are base64 inside JSON).', default: () => 40 * MB, parse: int(1024, 512 * MB) },
  { path: 'http.trustProxy', doc: 'Trust X-Forwarded-For from a reverse proxy when reading client addresses.', default: () => false, parse: bool },
  { path: 'api.rateLimit', doc: 'Requests allowed per API key per window (429 beyond).', default: () => 600, parse: int(1, 1_000_000) },
  { path: 'api.rateWindowMs', doc: 'Length of the API rate-limit window.', default: () => 60_000, parse: duration(1000) },
  {
    path: 'api.authFailureLimit',
    doc: 'Requests with an invalid API key allowed per client address per window (429 beyond; valid keys are not affected).',
    default: () => 30,
    parse: int(1, 1_000_000),
  },
  { path: 'smtp.enabled', doc: 'Run the SMTP submission listener.', default: () => true, parse: bool },
  { path: 'smtp.host', doc: 'Address the SMTP submission listener binds to.', default: () => '127.0.0.1', parse: str() },
  { path: 'smtp.port', doc: 'Port of the SMTP submission listener (STARTTLS).', default: () => 2587, parse: int(0, 65535) },
  { path: 'smtp.implicitTlsPort', doc: 'Port for implicit-TLS submission (RFC 8314, usually 465); 0 disables it.', default: () => 0, parse: int(0, 65535) },
  { path: 'smtp.tlsCert', doc: 'PEM certificate file for SMTP TLS; empty generates a self-signed one in dataDir.', default: () => '', parse: str({ allowEmpty: true }) },
  { path: 'smtp.tlsKey', doc: 'PEM private key file matching smtp.tlsCert.', default: () => '', parse: str({ allowEmpty: true }) },
  { path: 'smtp.maxMessageSize', doc: 'Largest accepted message in bytes, advertised in EHLO SIZE (RFC 1870).', default: () => 25 * MB, parse: int(1024, 512 * MB) },
  {
    path: 'smtp.authFailureLimit',
    doc: 'Failed AUTH attempts per user name and client address per 10 minutes before that user name is locked for that address (454 4.7.0).',
    default: () => 10,
    parse: int(1, 10_000),
  },
  {
    path: 'smtp.authFailuresPerAddress',
    doc: 'Failed AUTH attempts per client address (any user name) per minute before its AUTH attempts are refused for the rest of the minute (421 4.7.0).',
    default: () => 30,
    parse: int(1, 1_000_000),
  },
  { path: 'smtp.maxConnections', doc: 'SMTP connections open at the same time, in all (421 4.3.2 beyond).', default: () => 500, parse: int(1, 100_000) },
  {
    path: 'smtp.maxConnectionsPerAddress',
    doc: 'SMTP connections open at the same time from one client address (an IPv6 /64 counts as one; 421 4.7.0 beyond).',
    default: () => 20,
    parse: int(1, 100_000),
  },
  {
    path: 'smtp.authenticatedReserve',
    doc: 'Connections of smtp.maxConnections that sessions which have not authenticated cannot take, kept for authenticated clients.',
    default: () => 100,
    parse: int(0, 100_000),
  },
  {
    path: 'smtp.authTimeoutMs',
    doc: 'Time from connect to a successful AUTH; a deadline that traffic does not extend (421 4.7.0 after it).',
    default: () => 30_000,
    parse: duration(100),
  },
  { path: 'smtp.idleTimeoutMs', doc: 'Idle timeout of an authenticated SMTP session (RFC 5321 4.5.3.2.7: at least 5 minutes).', default: () => 300_000, parse: duration(1000) },
  { path: 'dns.servers', doc: 'DNS servers as ip or ip:port, comma separated; empty uses the system resolver.', default: () => [], parse: list(dnsServer) },
  { path: 'dns.timeoutMs', doc: 'Timeout of one DNS query.', default: () => 5000, parse: duration(100) },
  { path: 'delivery.enabled', doc: 'Run the delivery dispatcher (disable to only queue).', default: () => true, parse: bool },
  { path: 'delivery.port', doc: 'TCP port of recipient MX hosts.', default: () => 25, parse: int(1, 65535) },
  { path: 'delivery.rate', doc: 'Messages per second the scheduler hands to delivery.', default: () => 50, parse: int(1, 100_000) },
  { path: 'delivery.allowPrivate', doc: 'Allow MX addresses in loopback/private ranges (tests only).', default: () => false, parse: bool },
  { path: 'delivery.perDomainConcurrency', doc: 'Concurrent connections per recipient domain.', default: () => 3, parse: int(1, 100) },
  { path: 'delivery.retrySchedule', doc: 'Delays between attempts; "*" repeats the last step, "1h*3" repeats a step 3 times.', default: () => '5m,10m,30m,1h,2h,4h*', parse: retrySchedule },
  { path: 'delivery.maxAgeMs', doc: 'Give up (bounce) a message after this long in the queue.', default: () => 3 * 86_400_000, parse: duration(60_000) },
  { path: 'domains.dkimAlgorithm', doc: 'Default DKIM key type for new domains.', default: () => 'rsa', parse: str({ oneOf: ['rsa', 'ed25519'] }) },
  { path: 'domains.recheckIntervalMs', doc: 'How often verified domains are checked again in DNS.', default: () => 6 * 3_600_000, parse: duration(60_000) },
  { path: 'domains.returnPathLabel', doc: 'Return-path (bounce) host of a domain: <label>.<domain>, with MX and SPF pointing at hostname.', default: () => 'bounces', parse: dnsLabel },
  { path: 'domains.trackingLabel', doc: 'Optional tracking host of a domain: <label>.<domain>, a CNAME to the publicUrl host; once verified, tracking links use it.', default: () => 'track', parse: dnsLabel },
  { path: 'domains.unsubscribeLabel', doc: 'Optional unsubscribe host of a domain: <label>.<domain>, a CNAME to the publicUrl host; once verified, unsubscribe links use it.', default: () => 'unsub', parse: dnsLabel },
  { path: 'limits.channelsPerAccount', doc: 'Maximum channels per account (403 resource_limit_exceeded beyond).', default: () => 100, parse: int(1, 1_000_000) },
  { path: 'limits.domainsPerAccount', doc: 'Maximum domains per account.', default: () => 100, parse: int(1, 1_000_000) },
  { path: 'limits.pendingSendLimit', doc: 'Emails an account in state pending may send in total.', default: () => 1000, parse: int(0, 1_000_000_000) },
  { path: 'limits.broadcastMessages', doc: 'Most entries in one POST /send/broadcast.', default: () => 10_000, parse: int(1, 1_000_000) },
  { path: 'policy.denyRecipients', doc: 'Recipient domains or addresses nobody may mail (403 recipient_forbidden).', default: () => [], parse: list((s) => s.toLowerCase()) },
  { path: 'workers.threads', doc: 'Worker threads for rendering and signing; 0 chooses from the CPU count.', default: () => 0, parse: int(0, 64) },
  { path: 'retention.days', doc: 'Days events and message bodies are kept.', default: () => 30, parse: int(1, 3650) },
  { path: 'shutdown.graceMs', doc: 'How long SIGTERM waits for in-flight work before closing.', default: () => 10_000, parse: duration(0) },
  { path: 'metrics.token', doc: 'Bearer token that GET /metrics requires; empty: only loopback clients (not via a proxy) may read it.', default: () => '', parse: bearerToken },
  { path: 'webhooks.allowHttp', doc: 'Allow webhook URLs with http:// (default: https only).', default: () => false, parse: bool },
  { path: 'webhooks.allowPrivate', doc: 'Allow webhook targets in loopback/private ranges (checked at create and after DNS at each delivery).', default: () => false, parse: bool },
  { path: 'webhooks.retryBaseMs', doc: 'First retry delay of a failed webhook delivery; doubles per attempt (at most 4h between attempts).', default: () => 10_000, parse: duration(10) },
  { path: 'webhooks.maxAgeMs', doc: 'Give up a webhook delivery (counted as failed) after retrying this long.', default: () => 24 * 3_600_000, parse: duration(1000) },
  { path: 'webhooks.timeoutMs', doc: 'Timeout of one webhook request, from connecting to the end of the (capped) response.', default: () => 10_000, parse: duration(100) },
  { path: 'webhooks.concurrency', doc: 'Requests in flight per webhook endpoint at most.', default: () => 4, parse: int(1, 100) },
  { path: 'webhooks.maxPerAccount', doc: 'Maximum webhooks per account (403 resource_limit_exceeded beyond).', default: () => 20, parse: int(1, 10_000) },
  { path: 'inbound.enabled', doc: 'Run the inbound listener that receives bounces (RFC 3464 DSNs), feedback reports (RFC 5965 ARF) and unsubscribe mails for the return-path hosts of registered domains.', default: () => false, parse: bool },
  { path: 'inbound.host', doc: 'Address the inbound listener binds to (0.0.0.0 to receive from the internet).', default: () => '127.0.0.1', parse: str() },
  { path: 'inbound.port', doc: 'Port of the inbound listener: 25 in production (the MX of every return-path host points here), 0 picks a free port.', default: () => 2525, parse: int(0, 65535) },
];

function safeHostname(): string {
  const h = os.hostname().toLowerCase();
  return /^[a-z0-9.-]+$/.test(h) && h.length > 0 ? h : 'localhost';
}

/** POSTRIDER_HTTP_PORT for "http.port", POSTRIDER_DELIVERY_ALLOW_PRIVATE for "delivery.allowPrivate". */
export function envName(path: string): string {
  return 'POSTRIDER_' + path.replace(/\./g, '_').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

/** Empty (feature off) or a token long enough not to be guessed, usable in a header as is. */
function bearerToken(raw: unknown): string {
  const s = str({ allowEmpty: true })(raw);
  if (s !== '' && !/^[\x21-\x7e]{16,}$/.test(s)) throw new Error('must be empty or at least 16 printable characters without spaces');
  return s;
}
