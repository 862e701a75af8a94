/**
 * Loads the configuration once at start: embedded defaults, then the config file (JSON with
 * comments), then POSTRIDER_* environment variables. Every unknown or invalid key is collected
 * and reported together, so an operator fixes a broken file in one round. The result is frozen.
 * This is the only module that reads process.env (main.ts passes it in).
 */
import fs from 'node:fs';
import path from 'node:path';
import { readConfigFile } from './file.js';
import { configKeys, defaultValue, type ConfigKey } from './keys.js';
import type { Config } from './schema.js';
import { unknownFileKey, unknownVariable } from './unknown-key.js';
import { readValue } from './value.js';
import { deepFreeze } from '../domain/deep-freeze.js';
import { sendingIpProblems, type SendingIpSettings } from '../domain/sending-ips.js';
import { shapingProblems, type ShapingSettings } from '../domain/shaping-match.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export interface LoadOptions {
  /** Path from --config; falls back to env.POSTRIDER_CONFIG. */
  configPath?: string;
  env?: NodeJS.ProcessEnv;
  /** Values that win over everything (tests use this instead of files). */
  overrides?: Record<string, unknown>;
}

/** Environment variables that are not configuration keys but are still ours. */
const NON_KEY_ENV = new Set(['POSTRIDER_CONFIG']);

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const keys = configKeys();
  const problems: string[] = [];
  const values = new Map<string, unknown>();
  const byPath = new Map(keys.map((k) => [k.path, k]));

  const set = (keyPath: string, raw: unknown, source: string): void => {
    const key = byPath.get(keyPath);
    if (!key) {
      problems.push(`${source}: ${unknownFileKey(keyPath, keys)}`);
      return;
    }
    try {
      values.set(keyPath, readValue(key.schema, raw));
    } catch (err) {
      problems.push(`${source}: "${keyPath}" ${(err as Error).message}`);
    }
  };

  const file = opts.configPath ?? env.POSTRIDER_CONFIG;
  if (file) {
    const parsed = readConfigFile(file, problems);
    if (parsed) for (const [k, v] of flatten(parsed, '', byPath)) set(k, v, file);
  }

  const envKeys = new Map(keys.map((k) => [k.env, k.path]));
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('POSTRIDER_') || NON_KEY_ENV.has(name) || value === undefined) continue;
    const keyPath = envKeys.get(name);
    if (!keyPath) problems.push(`environment: ${unknownVariable(name, keys)}`);
    else set(keyPath, value, `environment ${name}`);
  }

  for (const [k, v] of Object.entries(opts.overrides ?? {})) set(k, v, 'overrides');

  checkCrossKeys(values, problems, byPath);
  if (problems.length > 0) throw new ConfigError(problems);
  return assemble(keys, values);
}

/** Nests the values (defaults where no source set a key), resolves dataDir and freezes. */
function assemble(keys: ConfigKey[], values: Map<string, unknown>): Config {
  const out: Record<string, unknown> = {};
  for (const key of keys) assign(out, key.path, values.has(key.path) ? values.get(key.path) : defaultValue(key));
  (out as { dataDir: string }).dataDir = path.resolve(out.dataDir as string);
  return deepFreeze(out) as unknown as Config;
}

function checkCrossKeys(values: Map<string, unknown>, problems: string[], byPath: ReadonlyMap<string, ConfigKey>): void {
  const effective = (p: string): unknown => (values.has(p) ? values.get(p) : defaultValue(byPath.get(p)!));
  if ((effective('http.bodyBufferLimit') as number) < (effective('http.bodyLimit') as number)) {
    problems.push('"http.bodyBufferLimit" must be at least "http.bodyLimit" (a body of the largest accepted size must fit in the buffer budget)');
  }
  const cert = values.get('smtp.tlsCert');
  const key = values.get('smtp.tlsKey');
  if (Boolean(cert) !== Boolean(key)) problems.push('"smtp.tlsCert" and "smtp.tlsKey" must be set together');
  if (Boolean(values.get('tlsRpt.reportChannelId')) !== Boolean(values.get('tlsRpt.reportFrom'))) {
    problems.push('"tlsRpt.reportChannelId" and "tlsRpt.reportFrom" must be set together (the channel that mails TLS-RPT reports and their From address)');
  }
  problems.push(...sendingIpProblems(sendingIpsOf(effective)));
  problems.push(...shapingProblems({ rules: effective('delivery.shaping.rules') as ShapingSettings['rules'], disable: effective('delivery.shaping.disable') as string[] }));
  const dataDir = effective('dataDir') as string;
  if (fs.existsSync(dataDir) && !fs.statSync(dataDir).isDirectory()) problems.push(`"dataDir" ${path.resolve(dataDir)} is a file, not a folder`);
  for (const p of ['smtp.tlsCert', 'smtp.tlsKey']) {
    const f = values.get(p);
    if (typeof f === 'string' && f && !fs.existsSync(f)) problems.push(`"${p}" file not found: ${f}`);
  }
}

function sendingIpsOf(effective: (p: string) => unknown): SendingIpSettings {
  return {
    sources: effective('delivery.sources') as SendingIpSettings['sources'],
    pools: effective('delivery.pools') as SendingIpSettings['pools'],
    defaultPools: { transactional: effective('delivery.defaultPools.transactional') as string, broadcast: effective('delivery.defaultPools.broadcast') as string },
  };
}

/** {http: {port: 1}} → [["http.port", 1]]; arrays, scalars and keys whose value is an object (delivery.sites) are leaves. */
function flatten(obj: Record<string, unknown>, prefix = '', keys?: ReadonlyMap<string, unknown>): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [k, v] of Object.entries(obj)) {
    const p = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && !keys?.has(p)) out.push(...flatten(v as Record<string, unknown>, p, keys));
    else out.push([p, v]);
  }
  return out;
}

function assign(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[parts[parts.length - 1]] = value;
}
