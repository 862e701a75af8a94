/**
 * A daemon on its real HTTP port for the sending-IP tests (issue 35: GET /ops/sources, shaping's
 * routes, a failing source), with its info log lines kept as objects: delivery off and no SMTP
 * listener unless the overrides say otherwise.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log/logger.js';
import { testStoreOverrides } from './store.js';

export interface SourcesDaemon {
  daemon: Daemon;
  /** Every log line so far, parsed. */
  lines: Record<string, unknown>[];
  url: () => string;
  /** Stops the daemon and removes its data folder. */
  stop(): Promise<void>;
}

export async function startSourcesDaemon(name: string, overrides: Record<string, unknown>): Promise<SourcesDaemon> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `postrider-${name}-`));
  const config = loadConfig({
    env: {},
    overrides: { dataDir, ...testStoreOverrides(dataDir), 'http.port': 0, 'log.level': 'info', 'smtp.enabled': false, 'delivery.enabled': false, ...overrides },
  });
  const lines: Record<string, unknown>[] = [];
  const daemon = new Daemon(config, createLogger({ level: 'info', destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } }));
  try {
    await daemon.start();
  } catch (err) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    daemon,
    lines,
    url: () => `http://127.0.0.1:${daemon.http.port}`,
    stop: async () => {
      await daemon.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
