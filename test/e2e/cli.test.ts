import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, runCli, startServe, type ServeProcess } from '../support/cli.js';
import { TEST_STORE_ENGINE, testSchemaOf } from '../support/store.js';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const TOKEN = /pr_[A-Za-z0-9_-]{20,}/g;

let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-cli-'));
  env = { POSTRIDER_DATA_DIR: dataDir };
  // The store is the daemon's to create: CLI commands only open an existing one.
  const first = await startServe(env);
  expect((await first.stop()).code).toBe(0);
});

afterAll(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli(args, env);

describe('postrider --help', () => {
  it('prints the usage and exits 0 for the program and every command', async () => {
    const variants = [
      ['--help'],
      ['serve', '--help'],
      ['keys', '--help'],
      ['accounts', '--help'],
      ['accounts', 'set-state', '-h'],
      ['config', '--help'],
    ];
    const results = await Promise.all(variants.map((args) => cli(...args)));
    results.forEach((r, i) => {
      expect(r.code, variants[i].join(' ') + r.stderr).toBe(0);
      expect(r.stdout, variants[i].join(' ')).toContain('Usage');
    });
    expect(results[0].stdout).toContain('Commands:');
    expect(results[1].stdout).toContain('postrider serve');
    expect(results[2].stdout).toContain('postrider keys create');
    expect(results[3].stdout).toContain('postrider accounts set-state');
    expect(results[4].stdout).toContain('postrider accounts set-state');
    expect(results[5].stdout).toContain('postrider config print');
  });

  it('exits 2 with the usage for no command, an unknown command and an unknown option', async () => {
    const [none, unknown, option] = await Promise.all([cli(), cli('frobnicate'), cli('accounts', 'list', '--bogus')]);
    expect(none.code).toBe(2);
    expect(none.stdout).toContain('Usage');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    expect(option.code).toBe(2);
    expect(option.stderr).toContain('--bogus');
    expect(option.stderr).toContain('Usage');
  });

  it('exits 2 for an argument a command does not take, instead of running without it', async () => {
    // `serve postrider.jsonc` (--config forgotten) ran on the defaults, a new store in ./data.
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-cli-extra-'));
    try {
      const file = path.join(cwd, 'postrider.jsonc');
      fs.writeFileSync(file, '{}');
      const serve = await runCli(['serve', file], { POSTRIDER_DATA_DIR: path.join(cwd, 'data'), POSTRIDER_HTTP_PORT: '0', POSTRIDER_SMTP_ENABLED: 'false' }, 10_000);
      expect(serve.code, serve.stderr).toBe(2);
      expect(serve.stderr).toContain(`unexpected argument "${file}" (a configuration file is given with --config PATH)`);
      expect(fs.readdirSync(cwd)).toEqual(['postrider.jsonc']);
      const cases: [string[], string][] = [
        [['accounts', 'list', 'acme'], 'acme'],
        [['keys', 'revoke', 'k1', 'k2'], 'k2'],
        [['queue', 'retry', 'j1', 'j2'], 'j2'],
        [['store', 'check', 'now'], 'now'],
        [['config', 'print', 'all'], 'all'],
        [['migrate', 'now'], 'now'],
      ];
      const results = await Promise.all(cases.map(([args]) => cli(...args)));
      results.forEach((r, i) => {
        expect(r.code, cases[i][0].join(' ')).toBe(2);
        expect(r.stderr).toContain(`unexpected argument "${cases[i][1]}"`);
      });
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe('postrider accounts', () => {
  let accountId: string;

  it('creates an account and lists it as JSON', async () => {
    const created = await cli('accounts', 'create', '--name', 'x');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(new RegExp(`^created account ${UUID.source} \\(active\\)\\n$`));
    accountId = UUID.exec(created.stdout)![0];

    const list = await cli('accounts', 'list', '--json');
    expect(list.code).toBe(0);
    const accounts = JSON.parse(list.stdout);
    expect(accounts).toContainEqual(expect.objectContaining({ id: accountId, name: 'x', state: 'active' }));
  });

  it('creates an account in a given state and prints it as JSON', async () => {
    const created = await cli('accounts', 'create', '--name', 'trial', '--state', 'pending', '--json');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ id: expect.stringMatching(UUID), name: 'trial', state: 'pending' });
  });

  it('changes the state of an account', async () => {
    const res = await cli('accounts', 'set-state', accountId, 'suspended');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`account ${accountId} is now suspended`);
    const list = await cli('accounts', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^id\s+name\s+state\s+createdAt$/);
    expect(list.stdout.split('\n').find((l) => l.startsWith(accountId))).toMatch(/\bsuspended\b/);
  });

  it('refuses an invalid state with exit code 2 and changes nothing', async () => {
    const res = await cli('accounts', 'set-state', accountId, 'frozen');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('state must be one of pending, active, suspended');
    const accounts = JSON.parse((await cli('accounts', 'list', '--json')).stdout);
    expect(accounts.find((a: any) => a.id === accountId).state).toBe('suspended');
  });

  it('exits 2 without a name and 1 for an unknown account', async () => {
    const [noName, unknown] = await Promise.all([
      cli('accounts', 'create'),
      cli('accounts', 'set-state', '00000000-0000-4000-8000-000000000000', 'active'),
    ]);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain('--name is required');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no account 00000000-0000-4000-8000-000000000000');
  });
});

describe('postrider keys with a running daemon on the same data folder', () => {
  let daemon: ServeProcess;
  let accountId: string;
  let keyId: string;
  let token: string;

  beforeAll(async () => {
    const account = await cli('accounts', 'create', '--name', 'keys', '--json');
    accountId = JSON.parse(account.stdout).id;
    const created = await cli('keys', 'create', '--account', accountId, '--name', 'ci');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('it is not shown again');
    keyId = UUID.exec(created.stdout)![0];
    const tokens = created.stdout.match(TOKEN)!;
    expect(tokens).toHaveLength(1);
    token = tokens[0];
    daemon = await startServe(env);
  });

  afterAll(async () => {
    await daemon?.stop();
  });

  it('prints a key at creation that authenticates against the daemon', async () => {
    const res = await call(`${daemon.url}/channels`, 'GET', token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ results: [], totalCount: 0 });
    const created = await call(`${daemon.url}/channels`, 'POST', token, { name: 'from the CLI key' });
    expect(created.status).toBe(200);
  });

  it('creates a channel key that sees only its channel', async () => {
    const a = (await call(`${daemon.url}/channels`, 'POST', token, { name: 'a' })).body;
    await call(`${daemon.url}/channels`, 'POST', token, { name: 'b' });
    const res = await cli('keys', 'create', '--account', accountId, '--channel', a.id, '--json');
    expect(res.code, res.stderr).toBe(0);
    const key = JSON.parse(res.stdout);
    expect(key).toMatchObject({ accountId, channelId: a.id, token: expect.stringMatching(/^pr_/) });
    const list = await call(`${daemon.url}/channels`, 'GET', key.token);
    expect(list.body.results.map((c: any) => c.id)).toEqual([a.id]);
  });

  it('refuses a key for an unknown account or for a channel of another account', async () => {
    const other = JSON.parse((await cli('accounts', 'create', '--name', 'other', '--json')).stdout);
    const channel = (await call(`${daemon.url}/channels`, 'POST', token, { name: 'not theirs' })).body;
    const [noAccount, foreignChannel] = await Promise.all([
      cli('keys', 'create', '--account', '00000000-0000-4000-8000-000000000000'),
      cli('keys', 'create', '--account', other.id, '--channel', channel.id),
    ]);
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain('no account');
    expect(foreignChannel.code).toBe(1);
    expect(foreignChannel.stderr).toContain(`no channel ${channel.id}`);
    expect(noAccount.stdout + foreignChannel.stdout).not.toMatch(TOKEN);
  });

  it('lists keys without ever printing the token or its hash', async () => {
    const hash = createHash('sha256').update(token).digest('hex');
    const [table, json] = await Promise.all([cli('keys', 'list'), cli('keys', 'list', '--account', accountId, '--json')]);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(keyId);
    expect(json.code).toBe(0);
    const keys = JSON.parse(json.stdout);
    expect(keys.find((k: any) => k.id === keyId)).toMatchObject({ accountId, name: 'ci', prefix: `${token.slice(0, 10)}…`, revokedAt: '' });
    for (const out of [table.stdout, json.stdout]) {
      expect(out).not.toContain(token);
      expect(out).not.toContain(token.slice(10));
      expect(out).not.toContain(hash);
      expect(out).not.toMatch(/[0-9a-f]{64}/);
    }
  });

  it('revokes a key, after which the running daemon answers 401', async () => {
    const res = await cli('keys', 'revoke', keyId);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`revoked key ${keyId}`);
    const after = await call(`${daemon.url}/channels`, 'GET', token);
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('unauthorized');
    const keys = JSON.parse((await cli('keys', 'list', '--account', accountId, '--json')).stdout);
    expect(keys.find((k: any) => k.id === keyId).revokedAt).not.toBe('');
  });

  it('exits 1 when revoking an unknown key', async () => {
    const res = await cli('keys', 'revoke', '00000000-0000-4000-8000-000000000000');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('no key');
  });
});

describe('postrider config', () => {
  it('prints the effective configuration as JSON, with environment overrides applied', async () => {
    const res = await runCli(['config', 'print'], {
      ...env,
      POSTRIDER_HTTP_PORT: '9999',
      POSTRIDER_DELIVERY_RATE: '7',
      POSTRIDER_DNS_SERVERS: '127.0.0.1:5353',
      POSTRIDER_DOMAINS_RECHECK_INTERVAL_MS: '6h',
    });
    expect(res.code, res.stderr).toBe(0);
    const config = JSON.parse(res.stdout);
    expect(config.dataDir).toBe(dataDir);
    expect(config.http.port).toBe(9999);
    expect(config.http.host).toBe('127.0.0.1');
    expect(config.delivery.rate).toBe(7);
    expect(config.dns.servers).toEqual(['127.0.0.1:5353']);
    expect(config.domains.recheckIntervalMs).toBe(21_600_000);
  });

  it('reads a commented config file given with --config, the environment winning over it', async () => {
    const file = path.join(dataDir, 'postrider.jsonc');
    fs.writeFileSync(file, '{\n  // port\n  "http": { "port": 1000 },\n  /* delivery */ "delivery": { "port": 2525 }\n}\n');
    const res = await runCli(['config', 'print', '--config', file], { ...env, POSTRIDER_HTTP_PORT: '2000' });
    expect(res.code, res.stderr).toBe(0);
    const config = JSON.parse(res.stdout);
    expect(config.http.port).toBe(2000);
    expect(config.delivery.port).toBe(2525);
  });

  it('masks credentials (metrics.token, the password of store.postgresUrl) unless --show-secrets', async () => {
    const secrets = { ...env, POSTRIDER_METRICS_TOKEN: 'tok-0123456789abcdef', POSTRIDER_STORE_POSTGRES_URL: 'postgres://postrider:hunter2@db.internal:5432/postrider' };
    const [masked, shown] = await Promise.all([runCli(['config', 'print'], secrets), runCli(['config', 'print', '--show-secrets'], secrets)]);
    expect(masked.code, masked.stderr).toBe(0);
    expect(masked.stdout).not.toContain('hunter2');
    expect(masked.stdout).not.toContain('tok-0123456789abcdef');
    const config = JSON.parse(masked.stdout);
    expect(config.metrics.token).toBe('********');
    expect(config.store.postgresUrl).toBe('postgres://postrider:********@db.internal:5432/postrider');
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ metrics: { token: 'tok-0123456789abcdef' }, store: { postgresUrl: 'postgres://postrider:hunter2@db.internal:5432/postrider' } });
  });

  it('lists every key with its environment variable', async () => {
    const res = await cli('config', 'print', '--keys');
    expect(res.code).toBe(0);
    for (const name of ['POSTRIDER_DATA_DIR', 'POSTRIDER_HTTP_PORT', 'POSTRIDER_DELIVERY_ALLOW_PRIVATE', 'POSTRIDER_SMTP_TLS_KEY']) {
      expect(res.stdout).toContain(name);
    }
  });

  it('exits 78 naming the bad key when an environment value is invalid, for config print and for serve', async () => {
    const bad = { ...env, POSTRIDER_HTTP_PORT: 'eighty', POSTRIDER_HTTP_PROT: '1' };
    const [print, serve] = await Promise.all([runCli(['config', 'print'], bad), runCli(['serve'], bad)]);
    for (const r of [print, serve]) {
      expect(r.code, r.stderr).toBe(78);
      expect(r.stderr).toContain('invalid configuration');
      expect(r.stderr).toContain('"http.port"');
      expect(r.stderr).toContain('POSTRIDER_HTTP_PORT');
      expect(r.stderr).toContain('POSTRIDER_HTTP_PROT');
      expect(r.stdout).toBe('');
    }
  });
});

describe('postrider --version', () => {
  it('prints the version of package.json, also as -V and version', async () => {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V', 'version']) {
      const r = await cli(flag);
      expect(r.code, flag).toBe(0);
      expect(r.stdout).toBe(`postrider ${pkg.version}\n`);
    }
  });
});

describe('a CLI command pointed at a folder without a store', () => {
  it('exits 66 with one line naming the folder and where it came from, and creates nothing', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-nostore-'));
    try {
      const byEnv = await runCli(['keys', 'list'], { POSTRIDER_DATA_DIR: path.join(empty, 'data') });
      expect(byEnv.code).toBe(66);
      const hint = "the folder comes from POSTRIDER_DATA_DIR. Point the command at the daemon's configuration with --config PATH (postrider init writes one) or set POSTRIDER_DATA_DIR\n";
      if (TEST_STORE_ENGINE === 'lmdb') {
        expect(byEnv.stderr).toBe(`postrider: there is no postrider store in ${path.join(empty, 'data')} (postrider serve creates it at its first start); ${hint}`);
      } else {
        // On PostgreSQL the store is the folder's schema (support/store.ts), named with its server, password masked.
        const pgStore = `schema ${testSchemaOf(path.join(empty, 'data'))} of ${process.env.POSTRIDER_TEST_PG_URL!.replace(/:[^:@/]+@/, ':***@')}`;
        const pgHint =
          "the URL comes from POSTRIDER_STORE_POSTGRES_URL, the schema from POSTRIDER_STORE_POSTGRES_SCHEMA. Point the command at the daemon's configuration with --config PATH, or set POSTRIDER_STORE_POSTGRES_URL and POSTRIDER_STORE_POSTGRES_SCHEMA as the daemon has them\n";
        expect(byEnv.stderr).toBe(`postrider: ${pgStore} holds no postrider store: start postrider serve (or run postrider migrate) with this store.postgresUrl first; ${pgHint}`);
      }
      const file = path.join(empty, 'postrider.jsonc');
      fs.writeFileSync(file, `{ "dataDir": ${JSON.stringify(path.join(empty, 'elsewhere'))} }`);
      for (const args of [['queue', 'list'], ['accounts', 'list'], ['keys', 'create', '--account', 'x']]) {
        const r = await runCli([...args, '--config', file], {});
        expect(r.code, args.join(' ')).toBe(66);
        expect(r.stderr).toContain(`the folder is dataDir of ${file}`);
        expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      }
      expect(fs.readdirSync(empty)).toEqual(['postrider.jsonc']);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });

  // The permissions of LMDB's files in the data folder: on PostgreSQL the store is not there.
  it.skipIf(TEST_STORE_ENGINE !== 'lmdb')('says permission denied with the path and the user in one line (exit 77), not a stack trace', async () => {
    // Root opens every folder: the data folder goes to another user, and the command runs as root
    // without the capabilities that override file permissions (util-linux's setpriv drops them
    // from the bounding set). Running it as nobody instead would need the repository readable by
    // nobody, which a clone in a 0700 folder is not.
    if (process.getuid?.() !== 0 || !fs.existsSync('/usr/bin/setpriv')) return;
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-perm-'));
    const data = path.join(folder, 'data');
    const first = await startServe({ POSTRIDER_DATA_DIR: data });
    await first.stop();
    try {
      for (const entry of fs.readdirSync(data, { recursive: true, withFileTypes: false }) as string[]) fs.chownSync(path.join(data, entry), 65534, 65534);
      fs.chownSync(data, 65534, 65534);
      fs.chmodSync(data, 0o700);
      const noOverride = ['/usr/bin/setpriv', '--bounding-set=-dac_override,-dac_read_search'];
      const r = await runCli(['keys', 'list'], { POSTRIDER_DATA_DIR: data }, 20_000, { wrap: noOverride });
      expect(r.code, r.stderr).toBe(77);
      expect(r.stderr).toMatch(new RegExp(`^postrider: permission denied on ${data}\\S* for user ${os.userInfo().username} \\(uid 0\\); run postrider as the user that owns the data folder`));
      expect(r.stderr).not.toContain('    at ');
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('says permission denied in one line (exit 77) when serve may not use the data folder or what it holds', async () => {
    // As above: root without the capabilities that override file permissions. serve stopped on an
    // EACCES stack trace (exit 1): from the lock's mkdir/temp file, or from reading node-id.
    if (process.getuid?.() !== 0 || !fs.existsSync('/usr/bin/setpriv')) return;
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-perm-serve-'));
    const data = path.join(folder, 'data');
    const first = await startServe({ POSTRIDER_DATA_DIR: data });
    await first.stop();
    const noOverride = ['/usr/bin/setpriv', '--bounding-set=-dac_override,-dac_read_search'];
    const serve = () => runCli(['serve'], { POSTRIDER_DATA_DIR: data, POSTRIDER_HTTP_PORT: '0', POSTRIDER_SMTP_PORT: '0' }, 20_000, { wrap: noOverride });
    const oneLine = (where: string) =>
      new RegExp(`^postrider: permission denied on ${where} for user ${os.userInfo().username} \\(uid 0\\); run postrider as the user that owns the data folder[^\\n]*\\n$`);
    try {
      for (const entry of fs.readdirSync(data, { recursive: true, withFileTypes: false }) as string[]) fs.chownSync(path.join(data, entry), 65534, 65534);
      fs.chownSync(data, 65534, 65534);
      fs.chmodSync(data, 0o700);
      const folderDenied = await serve();
      expect(folderDenied.code, folderDenied.stderr).toBe(77);
      expect(folderDenied.stderr).toMatch(oneLine(data));
      // The folder is this user's again, but the store's folder, node-id... are still another's
      // (a first start as another user): named before anything starts.
      fs.chownSync(data, 0, 0);
      const contentDenied = await serve();
      expect(contentDenied.code, contentDenied.stderr).toBe(77);
      // The first of them checked: LMDB's folder, or, on PostgreSQL (no db/ here), node-id.
      expect(contentDenied.stderr).toMatch(oneLine(path.join(data, TEST_STORE_ENGINE === 'lmdb' ? 'db' : 'node-id')));
      expect(fs.readdirSync(data).filter((f) => f.startsWith('daemon.lock'))).toEqual([]);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('postrider init', () => {
  let root: string;
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-init-'));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('writes a configuration the daemon and the CLI read from any folder, and keeps an existing one', async () => {
    const file = path.join(root, 'etc', 'postrider', 'postrider.jsonc');
    const data = path.join(root, 'var', 'lib', 'postrider');
    const r = await runCli(['init', '--hostname', 'MTA.Acme-Mail.org', '--data-dir', data, '--config', file], {});
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wrote ${file}`);
    // The unit's POSTRIDER_DATA_DIR wins over the file: another folder needs a drop-in, or the
    // daemon and the CLI given this file use two different stores.
    expect(r.stdout).toContain(
      `for ${data} add a drop-in (systemctl edit postrider): [Service] Environment=POSTRIDER_DATA_DIR=${data} and ReadWritePaths=${data}`,
    );
    const printed = await runCli(['config', 'print', '--config', file], {});
    expect(JSON.parse(printed.stdout)).toMatchObject({ hostname: 'mta.acme-mail.org', publicUrl: 'https://mta.acme-mail.org', dataDir: data });
    // The daemon creates the store there; a CLI command run from another folder finds it.
    const daemon = await startServe({ POSTRIDER_CONFIG: file });
    await daemon.stop();
    const keys = await runCli(['keys', 'list', '--config', file, '--json'], {}, 20_000, { cwd: os.tmpdir() });
    expect(keys.code, keys.stderr).toBe(0);
    expect(JSON.parse(keys.stdout)).toHaveLength(1);
    const again = await runCli(['init', '--hostname', 'other.acme-mail.org', '--config', file], {});
    expect(again.code).toBe(73);
    expect(again.stderr).toContain('exists already');
    expect(fs.readFileSync(file, 'utf8')).toContain('"mta.acme-mail.org"');
    const forced = await runCli(['init', '--hostname', 'other.acme-mail.org', '--data-dir', data, '--config', file, '--force'], {});
    expect(forced.code, forced.stderr).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toContain('"other.acme-mail.org"');
  });

  it('refuses a host name no DNS record can point at and a loopback public URL, writing nothing', async () => {
    const file = path.join(root, 'refused.jsonc');
    const cases: Array<[string[], string]> = [
      [['--hostname', 'vm'], 'must have at least two labels'],
      [['--hostname', 'mail.example.com'], 'is reserved'],
      [['--hostname', '192.0.2.7'], 'not an IP address'],
      [['--hostname', 'mta.acme-mail.org', '--public-url', 'http://127.0.0.1:8080'], 'loopback'],
      [['--hostname', 'mta.acme-mail.org', '--public-url', 'ftp://mta.acme-mail.org'], 'http or https'],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(['init', ...args, '--config', file], {});
      expect(r.code, args.join(' ')).toBe(78);
      expect(r.stderr).toContain(message);
    }
    const missing = await runCli(['init', '--config', file], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--hostname is required');
    expect(fs.existsSync(file)).toBe(false);
  });
});
