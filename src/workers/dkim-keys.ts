/**
 * Parsed DKIM private keys of one worker thread, keyed by their PEM text.
 *
 * Parsing a PEM key (crypto.createPrivateKey) costs as much as an RSA-2048 signature under
 * OpenSSL 3 and 12× an ed25519 one (bench/RESULTS.md, DKIM section), and a broadcast signs
 * thousands of messages with the same key. A KeyObject is immutable, so one can serve every
 * signature of its key.
 */
import type { KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import tools from 'mailauth/lib/tools.js';

export interface DkimKeyCacheOptions {
  /** Keys kept; a few hundred sending domains per thread. */
  max?: number;
  /**
   * Milliseconds a key stays unused before it is dropped. A key in use stays (each use renews
   * it); a rotated-out key is never asked for again and leaves after this time instead of
   * holding its place until the cache is full.
   */
  ttl?: number;
  /** Milliseconds from a monotonic clock; default performance.now (tests pass their own). */
  now?: () => number;
}

export class DkimKeyCache {
  private readonly keys: LRUCache<string, KeyObject>;
  /** Signatures that found their key parsed (for tests and benchmarks). */
  hits = 0;
  /** Keys parsed. */
  misses = 0;

  constructor(opts: DkimKeyCacheOptions = {}) {
    this.keys = new LRUCache({
      max: opts.max ?? 500,
      ttl: opts.ttl ?? 60 * 60_000,
      updateAgeOnGet: true,
      ...(opts.now ? { perf: { now: opts.now } } : {}),
    });
  }

  /** The key object for the PEM text, parsed on first use. A key that does not parse throws. */
  get(pem: string): KeyObject {
    const found = this.keys.get(pem);
    if (found) {
      this.hits++;
      return found;
    }
    this.misses++;
    // mailauth's parser, so a key reads exactly as its signer read it (PEM, or a raw 32-byte
    // ed25519 key).
    const key = tools.getPrivateKey(pem);
    this.keys.set(pem, key);
    return key;
  }

  get size(): number {
    return this.keys.size;
  }
}
