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
  api(method: string, urlPath: string, opts?: { body?: unknown; rawBody?: string; key?: string | null; headers?: Record<string, string> }): Promise<ApiResponse>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
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
    async api(method, urlPath, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      const key = opts.key === undefined ? creds.apiKey : opts.key;
      if (key !== null) headers.authorization = `Bearer ${key}`;
      let body: string | undefined;
      if (opts.rawBody !== undefined) body = opts.rawBody;
      else if (opts.body !== undefined) body = JSON.stringify(opts.body);
      if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      const res = await fetch(t.url + urlPath, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON: keep the text */
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
  };
  return t;
}
