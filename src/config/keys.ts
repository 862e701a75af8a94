/**
 * The keys of the configuration schema as a flat list: dotted path, environment variable,
 * documentation and the key's own schema. The loader, `config print --keys` and the example
 * renderer walk this list instead of the nested schema.
 */
import os from 'node:os';
import { KindGuard, type TSchema } from '@sinclair/typebox';
import type { KeyKeywords } from './kinds.js';
import { ConfigSchema, type Config } from './schema.js';

export interface ConfigKey {
  /** Dotted path into Config, e.g. "http.port". */
  path: string;
  /** POSTRIDER_HTTP_PORT for "http.port". */
  env: string;
  doc: string;
  schema: TSchema & KeyKeywords;
}

/** Every key, in the schema's order (the order of `config print` and the example file). */
export function configKeys(): ConfigKey[] {
  const keys: ConfigKey[] = [];
  const walk = (schema: TSchema, prefix: string): void => {
    for (const [name, child] of Object.entries(schema.properties as Record<string, TSchema>)) {
      const path = prefix + name;
      if (KindGuard.IsObject(child)) walk(child, `${path}.`);
      else keys.push({ path, env: envName(path), doc: child.description ?? '', schema: child as TSchema & KeyKeywords });
    }
  };
  walk(ConfigSchema, '');
  return keys;
}

/** POSTRIDER_HTTP_PORT for "http.port", POSTRIDER_DELIVERY_ALLOW_PRIVATE for "delivery.allowPrivate". */
export function envName(path: string): string {
  return 'POSTRIDER_' + path.replace(/\./g, '_').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

/** The keys whose value differs between two loaded configurations, in the schema's order. */
export function changedKeys(before: Config, after: Config): string[] {
  const at = (config: Config, path: string): string => JSON.stringify(path.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], config));
  return configKeys()
    .map((k) => k.path)
    .filter((path) => at(before, path) !== at(after, path));
}

/** The value of a key that no source sets; a fresh copy, since the loaded config is frozen. */
export function defaultValue(key: ConfigKey): unknown {
  if (key.schema.defaultFrom === 'machineHostname') return machineHostname();
  return structuredClone(key.schema.default);
}

/** The machine's name when it is usable in EHLO, else "localhost". */
function machineHostname(): string {
  const h = os.hostname().toLowerCase();
  return /^[a-z0-9.-]+$/.test(h) && h.length > 0 ? h : 'localhost';
}
