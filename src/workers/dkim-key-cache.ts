/**
 * Parsed DKIM private keys, remembered per worker thread.
 *
 * mailauth's signer turns the PEM text into a KeyObject (crypto.createPrivateKey) for every
 * signature, and it takes only PEM/DER, never a KeyObject. Under OpenSSL 3 that parse costs as
 * much as the RSA-2048 signature itself and 12× an ed25519 one (bench/RESULTS.md, DKIM section).
 * dkim-signer.js reads getPrivateKey from the tools module's exports when it is first loaded,
 * so replacing that export with a memo before the signer loads gives every signature a cached
 * KeyObject (immutable, safe to share). This module must be imported before anything loads
 * mailauth's signer (directly or through mailauth's verifier, which loads it too): worker.ts
 * imports it first. mailauth is pinned, and test/unit/dkim.test.ts checks that the memo is
 * in use, so a change that bypasses it fails a test instead of silently slowing signing down.
 */
import type { KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import tools from 'mailauth/lib/tools.js';
import { Lru } from './lru.js';

type GetPrivateKey = (key: string | Buffer) => KeyObject;

const mailauthTools = tools as unknown as { getPrivateKey?: GetPrivateKey };
const parse = mailauthTools.getPrivateKey;

/** A few hundred domains per thread; a rotated-out key simply ages out. */
export const dkimKeyCache = new Lru<string, KeyObject>(500);

/** False when the signer was loaded before this module: it keeps its own, unmemoized parser. */
export const dkimKeyCacheInstalled = typeof parse === 'function' && !signerLoaded();

if (typeof parse === 'function') {
  mailauthTools.getPrivateKey = (key) => dkimKeyCache.get(typeof key === 'string' ? key : key.toString('latin1'), () => parse(key));
}

function signerLoaded(): boolean {
  const require = createRequire(import.meta.url);
  return require.resolve('mailauth/lib/dkim/dkim-signer.js') in require.cache;
}
