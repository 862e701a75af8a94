/**
 * The checks and normalisations of configuration values that JSON Schema cannot state. A key
 * names its refiner in the schema (`refine: 'httpUrl'`); a refiner receives a value that has
 * already passed the schema and returns the value to keep, or throws a message that follows the
 * key's name.
 */
import { parseRetrySchedule } from '../domain/retry.js';
import { trimEndOf } from '../domain/trim-end.js';

const REFINERS = {
  /** Host names and e-mail domains compare case-insensitively (RFC 5321 2.4); keep one spelling. */
  lowercase: (value: string): string => value.toLowerCase(),
  /** An absolute http(s) URL without trailing slashes, or empty for "derive it" (domain/public-url.ts). */
  httpUrl: (raw: string): string => {
    const value = raw.trim();
    if (value === '') return '';
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new Error('must be an absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must be an http or https URL');
    // The scheme in lower case (RFC 3986 3.1: it is case-insensitive): users of the value test
    // for "https:" (the dashboard cookie's Secure, one-click unsubscribe), so HTTPS:// must not escape them.
    return trimEndOf(url.protocol + value.slice(url.protocol.length), '/');
  },
  /**
   * store.postgresUrl: empty (one node on LMDB) or a postgres:// or postgresql:// URL with a host
   * and a database, so that a typo stops the start here instead of as a connection error later.
   */
  postgresUrl: (value: string): string => {
    if (value.trim() === '') return '';
    let url: URL;
    try {
      url = new URL(value.trim());
    } catch {
      throw new Error('must be a URL such as postgres://postrider:secret@db.internal:5432/postrider');
    }
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') throw new Error('must be a postgres:// or postgresql:// URL');
    if (url.hostname === '') throw new Error('must name the database host (postgres://user:password@host:5432/database)');
    if (url.pathname.replace(/^\//, '') === '') throw new Error('must name the database after the host (postgres://user:password@host:5432/database)');
    return value.trim();
  },
  /** Parsed here so a bad schedule stops the start with the step at fault named; kept as text. */
  retrySchedule: (value: string): string => {
    parseRetrySchedule(value);
    return value.trim();
  },
} satisfies Record<string, (value: string) => string>;

export type RefinerName = keyof typeof REFINERS;

export function refineValue(name: RefinerName, value: string): string {
  return REFINERS[name](value);
}
