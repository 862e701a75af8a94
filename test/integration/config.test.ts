import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonc } from '../../src/config/file.js';
import { configKeys, defaultValue, envName } from '../../src/config/keys.js';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { readValue } from '../../src/config/value.js';

let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-config-'));
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Writes a config file into the test folder and returns its path. */
function writeFile(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

/** Loads and expects a ConfigError; returns it. */
function configError(opts: Parameters<typeof loadConfig>[0]): ConfigError {
  try {
    loadConfig(opts);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected loadConfig to throw a ConfigError');
}

describe('loadConfig defaults', () => {
  it('uses the embedded defaults when there is no file and no environment', () => {
    const c = loadConfig({ env: {} });
    expect(c.dataDir).toBe(path.resolve('./data'));
    expect(c.publicUrl).toBe(''); // derived from http.host and the bound port (domain/public-url.ts)
    expect(c.log.level).toBe('info');
    expect(c.http).toEqual({ host: '127.0.0.1', port: 8080, bodyLimit: 40 * 1024 * 1024, bodyBufferLimit: 256 * 1024 * 1024, trustProxy: false });
    expect(c.api).toEqual({ rateLimit: 600, rateWindowMs: 60_000, authFailureLimit: 30 });
    expect(c.smtp).toMatchObject({ enabled: true, host: '127.0.0.1', port: 2587, implicitTlsPort: 0, tlsCert: '', tlsKey: '' });
    expect(c.dns.servers).toEqual([]);
    expect(c.delivery).toMatchObject({ enabled: true, port: 25, rate: 50, allowPrivate: false });
    expect(c.domains.recheckIntervalMs).toBe(6 * 3_600_000);
    expect(c.limits.channelsPerAccount).toBe(100);
    expect(c.limits.pendingSendLimit).toBe(1000);
    expect(c.policy.denyRecipients).toEqual([]);
  });

  it('has a value for every key of the schema', () => {
    const c = loadConfig({ env: {} }) as unknown as Record<string, unknown>;
    for (const def of configKeys()) {
      const value = def.path.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)?.[part], c);
      expect(value, def.path).not.toBeUndefined();
    }
  });

  it('documents every key and gives it a default that the key\'s own schema accepts unchanged', () => {
    for (const key of configKeys()) {
      expect(key.doc, key.path).not.toBe('');
      const def = defaultValue(key);
      expect(readValue(key.schema, def), key.path).toEqual(def);
    }
  });

  it('uses a host name valid for EHLO by default', () => {
    expect(loadConfig({ env: {} }).hostname).toMatch(/^[a-z0-9.-]+$/);
  });
});

describe('loadConfig sources and precedence', () => {
  it('reads a JSON config file with // and /* */ comments, leaving // inside strings alone', () => {
    const file = writeFile(
      'comments.jsonc',
      `// a line comment at the top
      {
        /* a block comment
           over two lines */
        "publicUrl": "https://mail.example.com/", // a trailing comment
        "http": { "port": 9000, /* inline */ "host": "0.0.0.0" },
        "hostname": "MX1.Example.COM",
        "policy": { "denyRecipients": ["Example.ORG", "a\\"b//c"] }
      }`,
    );
    const c = loadConfig({ configPath: file, env: {} });
    expect(c.publicUrl).toBe('https://mail.example.com');
    expect(c.http.port).toBe(9000);
    expect(c.http.host).toBe('0.0.0.0');
    expect(c.hostname).toBe('mx1.example.com');
    expect(c.policy.denyRecipients).toEqual(['example.org', 'a"b//c']);
  });

  it('finds the config file through POSTRIDER_CONFIG and does not report that variable as unknown', () => {
    const file = writeFile('via-env.json', '{"delivery": {"rate": 7}}');
    expect(loadConfig({ env: { POSTRIDER_CONFIG: file } }).delivery.rate).toBe(7);
  });

  it('writes the scheme of publicUrl in lower case, without spaces around it', () => {
    expect(loadConfig({ env: { POSTRIDER_PUBLIC_URL: ' HTTPS://Mail.Example.com/ ' } }).publicUrl).toBe('https://Mail.Example.com');
    expect(loadConfig({ env: { POSTRIDER_PUBLIC_URL: 'Http://127.0.0.1:8080' } }).publicUrl).toBe('http://127.0.0.1:8080');
  });

  it('prefers an explicit config path over POSTRIDER_CONFIG', () => {
    const a = writeFile('explicit.json', '{"delivery": {"rate": 11}}');
    const b = writeFile('from-env.json', '{"delivery": {"rate": 12}}');
    expect(loadConfig({ configPath: a, env: { POSTRIDER_CONFIG: b } }).delivery.rate).toBe(11);
  });

  it('lets the environment win over the file and overrides win over the environment', () => {
    const file = writeFile('precedence.json', '{"http": {"port": 1001, "host": "10.0.0.1"}, "delivery": {"rate": 5, "port": 2525}}');
    const env = { POSTRIDER_HTTP_PORT: '1002', POSTRIDER_DELIVERY_RATE: '6' };
    const c = loadConfig({ configPath: file, env, overrides: { 'http.port': 1003 } });
    expect(c.http.port).toBe(1003); // overrides > env > file
    expect(c.delivery.rate).toBe(6); // env > file
    expect(c.http.host).toBe('10.0.0.1'); // file > default
    expect(c.delivery.port).toBe(2525);
  });

  it('ignores variables that do not start with POSTRIDER_', () => {
    expect(() => loadConfig({ env: { HTTP_PORT: 'x', PATH: '/usr/bin', postrider_http_port: 'x' } })).not.toThrow();
  });

  it('maps every fixed environment variable of DESIGN.md to its key', () => {
    const cert = writeFile('cert.pem', 'not really a certificate');
    const key = writeFile('key.pem', 'not really a key');
    const env = {
      POSTRIDER_DATA_DIR: path.join(dir, 'data-from-env'),
      POSTRIDER_HTTP_HOST: '0.0.0.0',
      POSTRIDER_HTTP_PORT: '18080',
      POSTRIDER_SMTP_HOST: '::1',
      POSTRIDER_SMTP_PORT: '10587',
      POSTRIDER_HOSTNAME: 'mta.example.net',
      POSTRIDER_PUBLIC_URL: 'https://track.example.net',
      POSTRIDER_DNS_SERVERS: '127.0.0.1:5353, 10.0.0.2',
      POSTRIDER_DELIVERY_PORT: '2525',
      POSTRIDER_DELIVERY_RATE: '200',
      POSTRIDER_DELIVERY_ALLOW_PRIVATE: 'true',
      POSTRIDER_SMTP_TLS_CERT: cert,
      POSTRIDER_SMTP_TLS_KEY: key,
    };
    const c = loadConfig({ env });
    expect(c.dataDir).toBe(path.join(dir, 'data-from-env'));
    expect(c.http.host).toBe('0.0.0.0');
    expect(c.http.port).toBe(18080);
    expect(c.smtp.host).toBe('::1');
    expect(c.smtp.port).toBe(10587);
    expect(c.hostname).toBe('mta.example.net');
    expect(c.publicUrl).toBe('https://track.example.net');
    expect(c.dns.servers).toEqual(['127.0.0.1:5353', '10.0.0.2']);
    expect(c.delivery.port).toBe(2525);
    expect(c.delivery.rate).toBe(200);
    expect(c.delivery.allowPrivate).toBe(true);
    expect(c.smtp.tlsCert).toBe(cert);
    expect(c.smtp.tlsKey).toBe(key);
  });

  it('names the environment variable of every key as POSTRIDER_ plus the key in upper snake case', () => {
    expect(envName('dataDir')).toBe('POSTRIDER_DATA_DIR');
    expect(envName('delivery.allowPrivate')).toBe('POSTRIDER_DELIVERY_ALLOW_PRIVATE');
    expect(envName('smtp.tlsCert')).toBe('POSTRIDER_SMTP_TLS_CERT');
    expect(envName('limits.channelsPerAccount')).toBe('POSTRIDER_LIMITS_CHANNELS_PER_ACCOUNT');
    const names = configKeys().map((k) => envName(k.path));
    expect(new Set(names).size).toBe(names.length);
  });

  it('accepts the usual spellings of booleans in the environment', () => {
    for (const yes of ['true', 'TRUE', '1', 'yes', 'on']) expect(loadConfig({ env: { POSTRIDER_DELIVERY_ALLOW_PRIVATE: yes } }).delivery.allowPrivate).toBe(true);
    for (const no of ['false', '0', 'no', 'off']) expect(loadConfig({ env: { POSTRIDER_SMTP_ENABLED: no } }).smtp.enabled).toBe(false);
  });

  it('resolves a relative dataDir to an absolute path', () => {
    expect(loadConfig({ env: { POSTRIDER_DATA_DIR: 'rel/data' } }).dataDir).toBe(path.resolve('rel/data'));
  });
});

describe('loadConfig durations', () => {
  it('reads durations written like "6h", "30s", "5m", "500ms" and "3d" as milliseconds', () => {
    const file = writeFile('durations.json', '{"domains": {"recheckIntervalMs": "6h"}, "api": {"rateWindowMs": "30s"}, "delivery": {"maxAgeMs": "3d"}}');
    const c = loadConfig({ configPath: file, env: { POSTRIDER_DNS_TIMEOUT_MS: '500ms', POSTRIDER_SHUTDOWN_GRACE_MS: '5m' } });
    expect(c.domains.recheckIntervalMs).toBe(21_600_000);
    expect(c.api.rateWindowMs).toBe(30_000);
    expect(c.delivery.maxAgeMs).toBe(3 * 86_400_000);
    expect(c.dns.timeoutMs).toBe(500);
    expect(c.shutdown.graceMs).toBe(300_000);
  });

  it('reads a bare number as milliseconds, in the file and in the environment', () => {
    const file = writeFile('duration-number.json', '{"api": {"rateWindowMs": 2500}}');
    expect(loadConfig({ configPath: file, env: {} }).api.rateWindowMs).toBe(2500);
    expect(loadConfig({ env: { POSTRIDER_API_RATE_WINDOW_MS: '4000' } }).api.rateWindowMs).toBe(4000);
  });

  it('refuses a duration it cannot read and one below the key\'s minimum', () => {
    const err = configError({ env: { POSTRIDER_DOMAINS_RECHECK_INTERVAL_MS: 'six hours', POSTRIDER_API_RATE_WINDOW_MS: '10ms' } });
    expect(err.problems).toHaveLength(2);
    expect(err.message).toContain('domains.recheckIntervalMs');
    expect(err.message).toContain('api.rateWindowMs');
  });

  it('refuses a timer duration longer than a Node timer can wait (it would fire at once), but not an age such as delivery.maxAgeMs', () => {
    // setTimeout(fn, 30 days) fires after 1 ms: the domain re-check ran back to back, thousands a second.
    const err = configError({ env: { POSTRIDER_DOMAINS_RECHECK_INTERVAL_MS: '30d', POSTRIDER_SHUTDOWN_GRACE_MS: '25d' } });
    expect(err.problems).toHaveLength(2);
    expect(err.message).toContain('"domains.recheckIntervalMs" must be at most 2147483647 ms');
    expect(err.message).toContain('"shutdown.graceMs" must be at most 2147483647 ms');
    expect(loadConfig({ env: { POSTRIDER_DOMAINS_RECHECK_INTERVAL_MS: '24d' } }).domains.recheckIntervalMs).toBe(24 * 86_400_000);
    const ages = loadConfig({ env: { POSTRIDER_DELIVERY_MAX_AGE_MS: '30d', POSTRIDER_WEBHOOKS_MAX_AGE_MS: '30d', POSTRIDER_INBOUND_POST_MAX_AGE_MS: '30d' } });
    expect([ages.delivery.maxAgeMs, ages.webhooks.maxAgeMs, ages.inbound.postMaxAgeMs]).toEqual([30 * 86_400_000, 30 * 86_400_000, 30 * 86_400_000]);
  });
});

describe('loadConfig errors', () => {
  it('reports an unknown file key, an unknown POSTRIDER_ variable and several invalid values together in one ConfigError', () => {
    const file = writeFile(
      'broken.json',
      `{
        "htp": { "port": 80 },          // typo: unknown key
        "delivery": { "rate": 0 },      // below the minimum
        "log": { "level": "loud" }      // not a level
      }`,
    );
    const err = configError({
      configPath: file,
      env: {
        POSTRIDER_HTTP_PROT: '8080', // typo: unknown variable
        POSTRIDER_HTTP_PORT: 'eighty',
        POSTRIDER_DELIVERY_ALLOW_PRIVATE: 'maybe',
        POSTRIDER_PUBLIC_URL: 'ftp://example.com',
        POSTRIDER_DNS_SERVERS: 'dns.example.com',
      },
    });
    expect(err.name).toBe('ConfigError');
    expect(err.problems).toHaveLength(8);
    for (const named of [
      'htp.port',
      'delivery.rate',
      'log.level',
      'POSTRIDER_HTTP_PROT',
      'http.port',
      'delivery.allowPrivate',
      'publicUrl',
      'dns.servers',
    ]) {
      expect(err.message).toContain(named);
    }
    // Each problem is on its own line, so an operator can read them all at once.
    expect(err.message.split('\n').filter((l) => l.startsWith('  - '))).toHaveLength(8);
  });

  it('names the source of a bad value: the file or the environment variable', () => {
    const file = writeFile('bad-port.json', '{"http": {"port": 70000}}');
    const fromFile = configError({ configPath: file, env: {} });
    expect(fromFile.problems[0]).toContain(file);
    expect(fromFile.problems[0]).toContain('"http.port"');
    const fromEnv = configError({ env: { POSTRIDER_SMTP_PORT: '-1' } });
    expect(fromEnv.problems[0]).toContain('POSTRIDER_SMTP_PORT');
    expect(fromEnv.problems[0]).toContain('"smtp.port"');
  });

  it('refuses values of the wrong JSON type in the file', () => {
    const file = writeFile('types.json', '{"http": {"port": "80x", "trustProxy": "sometimes"}, "dns": {"servers": [1, 2]}, "dataDir": 5}');
    const err = configError({ configPath: file, env: {} });
    expect(err.problems).toHaveLength(4);
    for (const named of ['http.port', 'http.trustProxy', 'dns.servers', 'dataDir']) expect(err.message).toContain(named);
  });

  it('tells a section given a value that is not an object it is a wrong type, and an unknown key or variable the one it is most likely a typo of', () => {
    // `"http": 8080` was reported as an unknown key "http", and a typo without a hint.
    const file = writeFile(
      'typos.json',
      '{"http": 8080, "log": null, "smtp": {"prot": 25}, "delivery": {"max_age_ms": "3d", "maxAge": "3d"}, "hostName": "mta.acme.org", "nothingLikeIt": 1}',
    );
    const err = configError({ configPath: file, env: { POSTRIDER_HTTP_PROT: '8080', POSTRIDER_DATADIR: '/srv', POSTRIDER_SHUTDOWN_GRACE: '5s', POSTRIDER_NOTHING: '1' } });
    expect(err.problems.sort()).toEqual(
      [
        `${file}: "http" must be an object of its keys (http.host, http.port, http.bodyLimit, …)`,
        `${file}: "log" must be an object of its keys (log.level)`,
        `${file}: unknown key "smtp.prot" (did you mean "smtp.port"?)`,
        `${file}: unknown key "delivery.max_age_ms" (did you mean "delivery.maxAgeMs"?)`,
        `${file}: unknown key "delivery.maxAge" (did you mean "delivery.maxAgeMs"?)`,
        `${file}: unknown key "hostName" (did you mean "hostname"?)`,
        `${file}: unknown key "nothingLikeIt"`,
        'environment: unknown variable POSTRIDER_HTTP_PROT (did you mean POSTRIDER_HTTP_PORT?)',
        'environment: unknown variable POSTRIDER_DATADIR (did you mean POSTRIDER_DATA_DIR?)',
        'environment: unknown variable POSTRIDER_SHUTDOWN_GRACE (did you mean POSTRIDER_SHUTDOWN_GRACE_MS?)',
        'environment: unknown variable POSTRIDER_NOTHING',
      ].sort(),
    );
  });

  it('refuses a dataDir that is a file, for every command, instead of a stack trace where it is first used', () => {
    const file = writeFile('not-a-folder', 'x');
    expect(configError({ env: { POSTRIDER_DATA_DIR: file } }).problems).toEqual([`"dataDir" ${file} is a file, not a folder`]);
  });

  it('refuses a non-integer port and an empty string', () => {
    const err = configError({ env: { POSTRIDER_HTTP_PORT: '80.5', POSTRIDER_HTTP_HOST: ' ' } });
    expect(err.problems).toHaveLength(2);
    expect(err.message).toContain('http.port');
    expect(err.message).toContain('http.host');
  });

  it('refuses an unknown key given as an override', () => {
    expect(configError({ env: {}, overrides: { 'http.nope': 1 } }).message).toContain('http.nope');
  });

  it('reports a config file that cannot be read or is not a JSON object', () => {
    expect(configError({ configPath: path.join(dir, 'missing.json'), env: {} }).message).toContain('ENOENT');
    expect(configError({ configPath: writeFile('bad.json', '{"http": {'), env: {} }).message).toContain('not valid JSON');
    expect(configError({ configPath: writeFile('array.json', '[1]'), env: {} }).message).toContain('top level must be an object');
  });

  it('requires the TLS certificate and key together, and both files to exist', () => {
    const cert = writeFile('only-cert.pem', 'x');
    expect(configError({ env: { POSTRIDER_SMTP_TLS_CERT: cert } }).message).toContain('must be set together');
    const err = configError({ env: { POSTRIDER_SMTP_TLS_CERT: cert, POSTRIDER_SMTP_TLS_KEY: path.join(dir, 'no-such-key.pem') } });
    expect(err.message).toContain('"smtp.tlsKey" file not found');
  });
});

describe('loadConfig result', () => {
  it('is frozen all the way down', () => {
    const c = loadConfig({ env: { POSTRIDER_DNS_SERVERS: '127.0.0.1:53' } });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.http)).toBe(true);
    expect(Object.isFrozen(c.dns.servers)).toBe(true);
    expect(() => {
      (c.http as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(() => {
      c.dns.servers.push('10.0.0.1');
    }).toThrow(TypeError);
    expect(c.http.port).toBe(8080);
  });

  it('does not share state between two loads', () => {
    const a = loadConfig({ env: { POSTRIDER_HTTP_PORT: '1' } });
    const b = loadConfig({ env: {} });
    expect(a.http.port).toBe(1);
    expect(b.http.port).toBe(8080);
  });
});

describe('parseJsonc', () => {
  it('keeps comment-like text inside strings, including after escaped quotes', () => {
    const text = '{"a": "x // y", "b": "p /* q */ r", "c": "\\"//\\"" /* gone */} // gone';
    expect(parseJsonc(text)).toEqual({ a: 'x // y', b: 'p /* q */ r', c: '"//"' });
  });

  it('names the line, column and offset of a syntax error in the file as written, comments included', () => {
    const text = [
      '// postrider configuration', // line 1
      '{',
      '  /* the HTTP API',
      '     listens here */',
      '  "http": { "port": 8080 }, // the API',
      '  "delivery": {',
      '    "rate": 5 // a missing comma follows',
      '    "port": 2525', // line 8: the error is at the quote in column 5
      '  }',
      '}',
    ].join('\n');
    const offset = text.indexOf('"port": 2525');
    expect(parseJsonc(text)).toBe(`comma expected at line 8, column 5, offset ${offset}`);
    const file = writeFile('syntax-error.jsonc', text);
    expect(configError({ configPath: file, env: {} }).problems).toEqual([
      `${file}: not valid JSON (comma expected at line 8, column 5, offset ${offset})`,
    ]);
  });
});
