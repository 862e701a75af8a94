/**
 * The effective configuration with its credentials masked (the keys whose schema says `secret`),
 * for `config print`: what it prints is pasted into tickets and chats. A set value becomes
 * "********"; a URL keeps everything but its password, so the host and database still show.
 */
import { configKeys } from './keys.js';
import type { Config } from './schema.js';

export const MASK = '********';

export function maskSecrets(config: Config): Config {
  const copy = structuredClone(config) as unknown as Record<string, unknown>;
  for (const key of configKeys()) {
    if (!key.schema.secret) continue;
    const parts = key.path.split('.');
    const leaf = parts.pop()!;
    const parent = parts.reduce<Record<string, unknown>>((node, part) => node[part] as Record<string, unknown>, copy);
    const value = parent[leaf];
    if (typeof value !== 'string' || value === '') continue;
    parent[leaf] = key.schema.secret === 'url-password' ? maskUrlPassword(value) : MASK;
  }
  return copy as unknown as Config;
}

/** postgres://user:pw@host/db → postgres://user:********@host/db; a URL without a password as it is. */
function maskUrlPassword(value: string): string {
  if (!URL.canParse(value)) return MASK;
  const url = new URL(value);
  if (url.password === '') return value;
  url.password = MASK;
  return url.toString();
}
