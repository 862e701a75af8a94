/**
 * The configuration schema: every key postrider understands, its default, its range and its
 * documentation, in one TypeBox schema that is both the validation and the `Config` type. The
 * loader (load.ts) validates a config file and the environment against it once at start;
 * `postrider config print` shows the result and config/postrider.example.jsonc (example.ts)
 * documents the same keys. The environment variable of a key is derived from its path (keys.ts).
 * The order of the keys is the order of `config print` and of the example file.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DKIM_ALGORITHMS } from '../domain/sending-domain.js';
import { duration, flag, integer, list, oneOf, optionalText, patterned, port, sendingPools, sendingSources, shapingRules, siteOverrides, text } from './kinds.js';

const MB = 1024 * 1024;

// RFC 5321 4.1.2: the EHLO argument is a domain (or an address literal, which we do not want).
const HOSTNAME = '^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$';
/** Empty, or a name with a dot whose last label is not all digits (an MX cannot name an IP address, RFC 5321 5.1). */
const FQDN_OR_EMPTY = '^$|^(?=.{1,253}$)(?=.*\\.[a-zA-Z0-9-]*[a-zA-Z][a-zA-Z0-9-]*$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$';
// RFC 1035 2.3.1: one LDH label of at most 63 characters.
const DNS_LABEL = '^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$';
// ip, ip:port, or [ipv6]:port; the resolver checks addresses again when it starts.
const DNS_SERVER = '^(\\d{1,3}(\\.\\d{1,3}){3}(:\\d{1,5})?|\\[[0-9a-fA-F:.]+\\](:\\d{1,5})?|[0-9a-fA-F:]+)$';
// Empty or local@domain for a DMARC rua mailto: URI; ",", ";" and "!" delimit in the tag (RFC 7489 6.4).
const DMARC_REPORT_ADDRESS = '^([^\\s@,;!<>"]+@[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+)?$';
// Empty or a channel id (the UUIDs the API hands out).
const CHANNEL_ID = '^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})?$';
// Empty or local@domain, without what could end the address or add one in a From field.
const MAILBOX = '^([^\\s\\x00-\\x1f\\x7f@,;<>"()]+@[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+)?$';
// Empty (feature off) or a token long enough not to be guessed, usable in a header as is.
const BEARER_TOKEN = '^([\\x21-\\x7e]{16,})?$';

function label(def: string, description: string) {
  return patterned(def, description, DNS_LABEL, 'must be one DNS label (letters, digits, inner hyphens)', 'lowercase');
}

const Smtp = Type.Object({
  enabled: flag(true, 'Run the SMTP submission listener.'),
  host: text('127.0.0.1', 'Address the SMTP submission listener binds to.'),
  port: port(2587, 'Port of the SMTP submission listener (STARTTLS).'),
  implicitTlsPort: port(0, 'Port for implicit-TLS submission (RFC 8314, usually 465); 0 disables it.'),
  tlsCert: optionalText('PEM certificate file for SMTP TLS; empty generates a self-signed one in dataDir.'),
  tlsKey: optionalText('PEM private key file matching smtp.tlsCert.'),
  maxMessageSize: integer(1024, 512 * MB, 25 * MB, 'Largest accepted message in bytes, advertised in EHLO SIZE (RFC 1870).'),
  authFailureLimit: integer(
    1,
    10_000,
    10,
    'Failed AUTH attempts per user name and client address per 10 minutes before that user name is locked for that address (454 4.7.0).',
  ),
  authFailuresPerAddress: integer(
    1,
    1_000_000,
    30,
    'Failed AUTH attempts per client address (any user name) per minute before its AUTH attempts are refused for the rest of the minute (421 4.7.0).',
  ),
  maxConnections: integer(1, 100_000, 500, 'SMTP connections open at the same time, in all (421 4.3.2 beyond).'),
  // 50, as Postfix's smtpd_client_connection_count_limit: an application that connects per message
  // opens its next connection while its last one is still quitting, so a pool of 20 workers
  // behind one address holds up to 40 at once (with 20 here, some of its connections got 421).
  maxConnectionsPerAddress: integer(
    1,
    100_000,
    50,
    'SMTP connections open at the same time from one client address (an IPv6 /64 counts as one; 421 4.7.0 beyond). An authenticated session stops counting when it ends (QUIT), an unauthenticated one when its socket closes.',
  ),
  authenticatedReserve: integer(
    0,
    100_000,
    100,
    'Connections of smtp.maxConnections that sessions which have not authenticated cannot take, kept for authenticated clients.',
  ),
  authTimeoutMs: duration(100, 30_000, 'Time from connect to a successful AUTH; a deadline that traffic does not extend (421 4.7.0 after it).'),
  idleTimeoutMs: duration(1000, 300_000, 'Idle timeout of an authenticated SMTP session (RFC 5321 4.5.3.2.7: at least 5 minutes).'),
  receivedClientInfo: flag(
    true,
    "Write the client's EHLO name and IP address into the Received header added to submitted mail (RFC 5321 4.4); false leaves them out for privacy (\"from unknown\").",
  ),
});

// RFC 8461: the recipient domain's policy, fetched over HTTPS and cached in the store (src/mta-sts/).
const MtaSts = Type.Object({
  enabled: flag(true, "Look up each recipient domain's MTA-STS policy (RFC 8461) and apply it: enforce, testing (report only) or none."),
  caFile: optionalText(
    'PEM file of extra CA certificates trusted for MTA-STS policy hosts and MX certificates, beside the built-in roots; for testing with a private CA only.',
  ),
  httpsPort: port(443, 'Port of the MTA-STS policy hosts (RFC 8461 3.3: 443); another port for tests only.'),
});

// RFC 8460: daily aggregate reports of outbound TLS results to the recipient domains that ask for them (src/tls-rpt/).
const TlsRpt = Type.Object({
  enabled: flag(
    true,
    'Send TLS-RPT reports (RFC 8460): after each UTC day, the TLS successes and failures of delivery to a recipient domain go to the rua of its _smtp._tls TXT record.',
  ),
  organizationName: optionalText('organization-name of the reports (RFC 8460 4.4); empty: hostname.'),
  contactInfo: optionalText('contact-info of the reports (RFC 8460 4.4); empty: postmaster@<hostname>.'),
  keepDays: integer(1, 365, 7, 'Days the daily counts and reports are kept in the store.'),
  allowPrivate: flag(false, 'Allow https: report addresses in loopback/private ranges (tests only).'),
  caFile: optionalText('PEM file of extra CA certificates trusted for https: report addresses, beside the built-in roots; for testing with a private CA only.'),
  reportChannelId: patterned(
    '',
    'Channel (its id) that reports to mailto: report addresses are sent from, through the normal send path (DKIM-signed, delivered and retried like any message); set with tlsRpt.reportFrom. Empty: mailto: addresses get no report (a warning in the log).',
    CHANNEL_ID,
    'must be empty or a channel id (UUID)',
    'lowercase',
  ),
  reportFrom: patterned(
    '',
    'From address of the reports sent by mail: on a verified domain linked to tlsRpt.reportChannelId, whose DKIM key signs them; set with tlsRpt.reportChannelId.',
    MAILBOX,
    'must be empty or an e-mail address local@domain',
  ),
});

const Delivery = Type.Object({
  enabled: flag(true, 'Run the delivery dispatcher (disable to only queue).'),
  port: integer(1, 65535, 25, 'TCP port of recipient MX hosts.'),
  rate: integer(1, 100_000, 50, 'Messages per second the scheduler hands to delivery.'),
  allowPrivate: flag(false, 'Allow MX addresses in loopback/private ranges (tests only).'),
  // Kept under its old name (existing files and POSTRIDER_DELIVERY_PER_DOMAIN_CONCURRENCY keep
  // working); what it counts is now the MX site, the destination, not the recipient domain.
  perDomainConcurrency: integer(
    1,
    100,
    3,
    'Concurrent connections per destination (MX site: the set of MX hosts, shared by every recipient domain they serve), unless delivery.sites or the built-in provider table says otherwise.',
  ),
  sites: siteOverrides(
    'Limits per MX site by MX host name suffix, e.g. {"google.com": {"concurrency": 5, "maxMessagesPerConnection": 50}}; they win over the built-in provider table.',
  ),
  // Checked step by step when loaded, so a bad schedule stops the start; kept as text.
  retrySchedule: Type.String({
    default: '5m,10m,30m,1h,2h,4h*',
    description: 'Delays between attempts; "*" repeats the last step, "1h*3" repeats a step 3 times.',
    pattern: '\\S',
    refine: 'retrySchedule',
  }),
  maxAgeMs: duration(60_000, 3 * 86_400_000, 'Give up (bounce) a message after this long in the queue.', null),
  maxMessagesPerConnection: integer(
    1,
    10_000,
    100,
    'Messages sent over one SMTP connection to an MX host (RSET between them, RFC 5321 4.1.1.5) before it is closed; 1 turns connection reuse off.',
  ),
  connectionIdleMs: duration(100, 5000, 'How long an idle SMTP connection is kept for the next message to the same MX address before QUIT.'),
  // Sending IPs (issue 35, README "Sending IPs"); checked together in sending-ips.ts.
  sources: sendingSources(
    'Local addresses outgoing connections are bound to, as [{"name": "ip1", "address": "192.0.2.10", "ehloName": "mta1.example.com"}]; ehloName defaults to hostname and should be the PTR name of the address; an optional "rate" (messages/s at the receivers) holds the source below delivery.rate; an optional "warmup": {"start": "YYYY-MM-DD", "curve"?: [messages a day per provider for day 1..N], "sites"?: {"microsoft": [...], "other": [...]}} caps a new address per provider and day (and hour) until its curves end, by default with the built-in curves (README "Sending IPs"). Empty: the kernel picks the address (one implicit source).',
  ),
  pools: sendingPools(
    'Pools of sources with weights, as {"transactional": [{"source": "ip1", "weight": 3}, {"source": "ip2", "weight": 1}]}. A pool named "default" not listed here holds every source at weight 1.',
  ),
  defaultPools: Type.Object({
    transactional: optionalText('Pool of transactional mail whose channel names no ipPool; empty: "default".'),
    broadcast: optionalText('Pool of broadcast mail whose channel names no ipPool; empty: "default".'),
  }),
  // Automatic shaping (issue 35, README "Sending IPs"); checked together in domain/shaping-match.ts.
  shaping: Type.Object({
    rules: shapingRules(
      'Automatic shaping rules of your own, checked before the built-in ones, as [{"id": "orange-rl", "suffixes": ["orange.fr"], "match": "OFR004_104", "action": "ceiling", "concurrency": 1, "perSecond": 1, "duration": "30m"}]: a failed attempt whose reply matches ("match": a pattern of the reply text, and/or "enhancedCode") takes the source out ("suspend") or holds it to a ceiling at that site ("suffixes", or every site of "provider", an id of the built-in provider table) for "duration" (1m to 7d).',
    ),
    disable: list('Ids of built-in shaping rules to turn off, e.g. ["google-unsolicited-rate"] (README "Sending IPs" lists them).'),
  }),
  mtaSts: MtaSts,
});

const Domains = Type.Object({
  dkimAlgorithm: oneOf(DKIM_ALGORITHMS, 'rsa', 'Default DKIM key type for new domains.'),
  recheckIntervalMs: duration(60_000, 6 * 3_600_000, 'How often verified domains are checked again in DNS.'),
  returnPathLabel: label('bounces', 'Return-path (bounce) host of a domain: <label>.<domain>, with MX and SPF pointing at domains.mxHost.'),
  mxHost: patterned(
    '',
    'Host name every domain\'s return-path MX and SPF (and inbound MX) point at; empty: hostname. Cluster mode: the same name on every node, with an A (and AAAA) record for each node\'s address, so that every node shows and checks the same records (README "Running several nodes").',
    FQDN_OR_EMPTY,
    'must be empty or a fully qualified host name, such as mail.example.com',
    'lowercase',
  ),
  trackingLabel: label(
    'track',
    'Optional tracking host of a domain: <label>.<domain>, a CNAME to the publicUrl host; once verified, tracking links use it.',
  ),
  unsubscribeLabel: label(
    'unsub',
    'Optional unsubscribe host of a domain: <label>.<domain>, a CNAME to the publicUrl host; once verified, unsubscribe links use it.',
  ),
  dmarcReportAddress: patterned(
    '',
    'Mailbox for DMARC aggregate reports: the rua=mailto: of the _dmarc TXT recommended to every domain (v=DMARC1; p=none); empty: the record has no rua. Outside the sending domain, its domain must publish <sending domain>._report._dmarc.<its domain> TXT "v=DMARC1" (RFC 7489 7.1).',
    DMARC_REPORT_ADDRESS,
    'must be empty or an e-mail address local@domain (without spaces, ",", ";" or "!", which a DMARC URI list cannot carry)',
  ),
});

const Webhooks = Type.Object({
  allowHttp: flag(false, 'Allow webhook URLs with http:// (default: https only).'),
  allowPrivate: flag(false, 'Allow webhook targets in loopback/private ranges (checked at create and after DNS at each delivery).'),
  retryBaseMs: duration(10, 10_000, 'First retry delay of a failed webhook delivery; doubles per attempt (at most 4h between attempts).'),
  maxAgeMs: duration(1000, 24 * 3_600_000, 'Give up a webhook delivery (counted as failed) after retrying this long.', null),
  timeoutMs: duration(100, 10_000, 'Timeout of one webhook request, from connecting to the end of the (capped) response.'),
  concurrency: integer(1, 100, 4, 'Requests in flight per webhook endpoint at most.'),
  maxPerAccount: integer(1, 10_000, 20, 'Maximum webhooks per account (403 resource_limit_exceeded beyond).'),
});

/** Stored templates (issue 34): the limits the store's create and update apply atomically. */
const Templates = Type.Object({
  maxPerAccount: integer(1, 10_000, 100, 'Maximum stored templates per account (403 resource_limit_exceeded beyond).'),
  maxVersions: integer(1, 1_000, 50, 'Maximum versions of one template; a PATCH with new content beyond is 403 resource_limit_exceeded (delete and create again to start over).'),
  maxBytes: integer(1024, 16 * MB, 512 * 1024, 'Maximum bytes (UTF-8) of one version: subject, html and text together (422 max_size beyond).'),
});

const Inbound = Type.Object({
  enabled: flag(
    false,
    'Run the inbound listener that receives mail for inbound routes (POSTed to their URLs) and bounces (RFC 3464 DSNs), feedback reports (RFC 5965 ARF) and unsubscribe mails for the return-path hosts of registered domains.',
  ),
  host: text('127.0.0.1', 'Address the inbound listener binds to (0.0.0.0 to receive from the internet).'),
  port: port(2525, 'Port of the inbound listener: 25 in production (the MX of every routed domain and return-path host points here), 0 picks a free port.'),
  maxRoutesPerAccount: integer(1, 10_000, 100, 'Maximum inbound routes per account (403 resource_limit_exceeded beyond).'),
  maxMessageSize: integer(
    1024,
    512 * MB,
    36 * MB,
    'Largest message the inbound listener accepts in bytes, advertised in EHLO SIZE (RFC 1870): the default takes a 25 MB attachment after base64 (4/3) with room for the rest.',
  ),
  maxConnections: integer(1, 100_000, 200, 'Inbound SMTP connections open at the same time, in all (421 4.3.2 beyond).'),
  maxConnectionsPerAddress: integer(
    1,
    100_000,
    20,
    'Inbound SMTP connections open at the same time from one client address (an IPv6 /64 counts as one; 421 4.7.0 beyond).',
  ),
  idleTimeoutMs: duration(1000, 300_000, 'Idle timeout of an inbound SMTP session (RFC 5321 4.5.3.2.7: at least 5 minutes).'),
  greetingDelayMs: duration(
    0,
    100,
    "Pause between an inbound connection and its 220 greeting: a client that talks before the greeting (RFC 5321 4.3.1 has it wait; spam bots often do not) is answered 421 and dropped. 0 greets at once. The submission listener always greets at once.",
    10_000,
  ),
  sessionTimeoutMs: duration(1000, 1_800_000, 'Longest an inbound SMTP session may last from connect, however active (421 4.7.0 after it).'),
  postMaxAgeMs: duration(
    1000,
    24 * 3_600_000,
    "Keep retrying the POST of a received message to its route's URL this long after it was received (backoff from webhooks.retryBaseMs), then mark it failed.",
    null,
  ),
  concurrency: integer(
    1,
    1000,
    32,
    'Received messages verified, parsed and POSTed at once at most, by this node (fewer while large messages take up 256 MiB of their bytes).',
  ),
  attachmentInlineMax: integer(
    0,
    512 * MB,
    10 * MB,
    "Attachments up to this many bytes (decoded) are inlined in base64 in a received message's JSON; larger ones are listed with a link in their place.",
  ),
});

// A PostgreSQL identifier postrider creates its tables under (unquoted, so lowercase).
const PG_SCHEMA = '^[a-z_][a-z0-9_]{0,62}$';

// Cluster mode (issue 32, README "Running several nodes"): every node keeps all its state in one
// PostgreSQL database and the nodes become interchangeable.
const StoreSection = Type.Object({
  postgresUrl: optionalText(
    'Cluster mode: the PostgreSQL database every node keeps all its state in, as postgres://user:password@host:5432/database (the password may come from PGPASSWORD instead); empty: this node alone, on LMDB in dataDir.',
    { refine: 'postgresUrl', secret: 'url-password' },
  ),
  postgresSchema: patterned('postrider', 'PostgreSQL schema the tables are created in (one per postrider service sharing a database).', PG_SCHEMA, 'must be a lowercase PostgreSQL name: letters, digits and _, at most 63, not starting with a digit'),
  poolSize: integer(1, 1000, 10, 'PostgreSQL connections per node (cluster mode).'),
  statementTimeoutMs: duration(
    100,
    30_000,
    'Longest any PostgreSQL statement may run before PostgreSQL cancels it (cluster mode): a runaway list or dashboard query must not hold back vacuum for everyone.',
  ),
  requestTimeoutMs: duration(
    100,
    15_000,
    'Longest an API request or SMTP command waits for any one PostgreSQL call (cluster mode): a database that hangs is answered 503 store_timeout (SMTP 451 4.3.0), the outcome unknown, to retry with the same Idempotency-Key.',
  ),
});

export const ConfigSchema = Type.Object({
  dataDir: text('./data', 'Folder holding the LMDB environment (one node), generated keys, certificates and the node id.'),
  store: StoreSection,
  hostname: Type.String({
    description: 'Name announced in EHLO/HELO and the SMTP greeting; also the return-path host unless domains.mxHost is set.',
    defaultFrom: 'machineHostname',
    examples: ['mail.example.com'],
    pattern: HOSTNAME,
    errorMessage: 'must be a host name (letters, digits, hyphens, dots)',
    refine: 'lowercase',
  }),
  publicUrl: optionalText(
    'Base URL under which tracking, unsubscribe and error links are served; empty: http://<http.host>:<port the HTTP API listens on> (hostname for a wildcard http.host).',
    { refine: 'httpUrl' },
  ),
  log: Type.Object({
    level: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info', 'pino log level.'),
  }),
  http: Type.Object({
    host: text('127.0.0.1', 'Address the HTTP API listens on.'),
    port: port(8080, 'Port of the HTTP API (0 picks a free port).'),
    bodyLimit: integer(1024, 512 * MB, 40 * MB, 'Largest accepted request body in bytes (attachments are base64 inside JSON).'),
    bodyBufferLimit: integer(
      1024,
      8192 * MB,
      256 * MB,
      'Request body bytes buffered at once over all requests in flight; a body beyond it is refused with 503 and Retry-After. At least http.bodyLimit.',
    ),
    trustProxy: flag(false, 'Trust X-Forwarded-For from a reverse proxy when reading client addresses.'),
  }),
  api: Type.Object({
    rateLimit: integer(1, 1_000_000, 600, 'Requests allowed per API key per window (429 beyond).'),
    rateWindowMs: duration(1000, 60_000, 'Length of the API rate-limit window.'),
    authFailureLimit: integer(
      1,
      1_000_000,
      30,
      'Requests with an invalid API key allowed per client address per window (429 beyond; valid keys are not affected).',
    ),
  }),
  smtp: Smtp,
  dns: Type.Object({
    servers: list(
      'DNS servers as ip or ip:port, comma separated; empty uses the system resolver.',
      Type.String({ pattern: DNS_SERVER, errorMessage: 'is not ip, ip:port or [ipv6]:port' }),
    ),
    timeoutMs: duration(100, 5000, 'Timeout of one DNS query.'),
    dnssecValidating: flag(
      false,
      'The DNS servers validate DNSSEC and the path to them is trusted, so their AD bit is believed: enables DANE TLSA lookups (RFC 7672). False: DANE off.',
    ),
  }),
  delivery: Delivery,
  tlsRpt: TlsRpt,
  domains: Domains,
  limits: Type.Object({
    channelsPerAccount: integer(1, 1_000_000, 100, 'Maximum channels per account (403 resource_limit_exceeded beyond).'),
    domainsPerAccount: integer(1, 1_000_000, 100, 'Maximum domains per account.'),
    apiKeysPerAccount: integer(1, 100_000, 100, 'Maximum live API keys per account made with POST /api-keys (403 resource_limit_exceeded beyond).'),
    pendingSendLimit: integer(0, 1_000_000_000, 1000, 'Emails an account in state pending may send in total.'),
    broadcastMessages: integer(1, 1_000_000, 10_000, 'Most entries in one POST /send/broadcast.'),
    maxScheduleDays: integer(1, 3650, 30, 'How many days ahead a send may be scheduled (scheduledAt; 422 on /scheduledAt beyond).'),
  }),
  policy: Type.Object({
    denyRecipients: list('Recipient domains or addresses nobody may mail (403 recipient_forbidden).', Type.String({ refine: 'lowercase' })),
  }),
  workers: Type.Object({ threads: integer(0, 64, 0, 'Worker threads for rendering, composing and signing; 0: one per available core (os.availableParallelism()).') }),
  retention: Type.Object({ days: integer(1, 3650, 30, 'Days events and message bodies are kept; a message not finished (scheduled, queued, retrying) is kept whole, and this long after its delivery ended.') }),
  statistics: Type.Object({
    cacheBuckets: integer(
      0,
      10_000_000,
      50_000,
      'Closed statistics series buckets (days, hours) this node keeps in memory, about 310 bytes each, so a series read again reads only its open buckets from the store; 0 turns the cache off.',
    ),
  }),
  shutdown: Type.Object({ graceMs: duration(0, 10_000, 'How long SIGTERM waits for in-flight work before closing.') }),
  metrics: Type.Object({
    token: optionalText('Bearer token that GET /metrics requires; empty: only loopback clients (not via a proxy) may read it.', {
      pattern: BEARER_TOKEN,
      errorMessage: 'must be empty or at least 16 printable characters without spaces',
      secret: 'value',
    }),
    operatorAccounts: list(
      "Account ids whose account-level API keys, and dashboard sessions opened with one, may also use the operator routes (/ops/*: the sending IPs, the dashboard's Sources page). Empty: only metrics.token, or loopback without a token.",
      Type.String({ minLength: 1, maxLength: 64 }),
    ),
  }),
  webhooks: Webhooks,
  inbound: Inbound,
  templates: Templates,
});

export type Config = Static<typeof ConfigSchema>;
