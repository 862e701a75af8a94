/**
 * Runs a real daemon in-process for integration tests: real LMDB in a temp folder, real HTTP
 * port on loopback (port 0), silent logs. `restart()` reopens the same data folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log/logger.js';
import { startDnsServer, type TestDns } from './dns-server.js';
import { checkAgainstDocument } from './openapi-check.js';
import { testStoreOverrides } from './store.js';

export interface TestDaemon {
  daemon: Daemon;
  config: Config;
  url: string;
  /** The account-level key created on first start. */
  apiKey: string;
  accountId: string;
  dataDir: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** fetch against the daemon with the initial key unless headers say otherwise. */
  api(method: string, urlPath: string, opts?: ApiOptions): Promise<ApiResponse>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

export interface ApiOptions {
  body?: unknown;
  rawBody?: string | Buffer;
  /** Default: the daemon's initial account key; null: no Authorization header. */
  key?: string | null;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * One request to a daemon's API (in-process or child): a JSON body unless rawBody is given,
 * Bearer `key` (defaultKey(), read only when o.key is not given), the answer parsed as JSON when it is.
 */
export async function apiRequest(baseUrl: string, defaultKey: () => string, method: string, urlPath: string, o: ApiOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...o.headers };
  const key = o.key === undefined ? defaultKey() : o.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  let body: string | Buffer | undefined;
  if (o.rawBody !== undefined) body = o.rawBody;
  else if (o.body !== undefined) body = JSON.stringify(o.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  const res = await fetch(baseUrl + urlPath, { method, headers, body, signal: o.signal });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text */
  }
  await checkAgainstDocument(baseUrl, { method, urlPath, status: res.status, contentType: res.headers.get('content-type'), body: parsed });
  return { status: res.status, headers: res.headers, body: parsed };
}

export async function startDaemon(overrides: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): Promise<TestDaemon> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-test-'));
  const config = loadConfig({
    env,
    overrides: {
      dataDir,
      'http.port': 0,
      'log.level': 'silent',
      'smtp.enabled': false,
      'delivery.enabled': false,
      ...testStoreOverrides(dataDir),
      ...overrides,
    },
  });
  const logger = createLogger({ level: config.log.level });
  let daemon = new Daemon(config, logger);
  await daemon.start();
  const creds = daemon.initialCredentials!;
  const t: TestDaemon = {
    get daemon() {
      return daemon;
    },
    config,
    get url() {
      return `http://127.0.0.1:${daemon.http.port}`;
    },
    apiKey: creds.apiKey,
    accountId: creds.accountId,
    dataDir,
    async restart() {
      await daemon.stop();
      daemon = new Daemon(config, logger);
      await daemon.start();
    },
    async stop() {
      await daemon.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
    api(method, urlPath, opts = {}) {
      return apiRequest(t.url, () => creds.apiKey, method, urlPath, opts);
    },
  };
  return t;
}

/** A daemon whose DNS is a fresh test DNS server (dns.servers), with `overrides` on top. */
export async function startDaemonWithDns(overrides: Record<string, unknown> = {}): Promise<{ t: TestDaemon; dns: TestDns }> {
  const dns = await startDnsServer();
  try {
    return { t: await startDaemon({ 'dns.servers': [dns.address], ...overrides }), dns };
  } catch (err) {
    await dns.close();
    throw err;
  }
}

/** Stops what startDaemonWithDns started (either may be missing when the start failed). */
export async function stopDaemonWithDns(d: { t?: TestDaemon; dns?: TestDns }): Promise<void> {
  await d.t?.stop();
  await d.dns?.close();
}
