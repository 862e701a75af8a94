import { describe, expect, it } from 'vitest';
import { AppError, MAX_FIELD_ERRORS } from '../../src/domain/errors.js';
import { parseJsonBody } from '../../src/http/json-body.js';
import { MAX_BODY_DEPTH, MAX_KEYS_PER_OBJECT, maxBodyValues, MIN_MAX_BODY_VALUES, scanJson } from '../../src/http/json-scan.js';

/** The AppError `f` throws (fails when it throws none or another kind). */
function thrown(f: () => unknown): AppError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('nothing was thrown');
}

/** Values of a parsed JSON text counted the slow way: every object, array and scalar. */
function countValues(v: unknown): number {
  if (v === null || typeof v !== 'object') return 1;
  return 1 + (Array.isArray(v) ? v : Object.values(v)).reduce((n: number, x) => n + countValues(x), 0);
}

/** A deterministic pseudo-random JSON value, some of it nested, with escapes and empty containers. */
function randomJson(seed: number, depth = 0): unknown {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const make = (d: number): unknown => {
    const r = next();
    if (d > 5 || r < 0.4) return [1.5e-3, -2, true, false, null, 'a"b\\', '', '\\u0041', '{[,]}:'][Math.floor(next() * 9)];
    const n = Math.floor(next() * 4);
    if (r < 0.7) return Array.from({ length: n }, () => make(d + 1));
    return Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}"\\/${i}`, make(d + 1)]));
  };
  return make(depth);
}

describe('the JSON pre-scan', () => {
  it('counts the values of any JSON text exactly, pretty-printed or not', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const v = randomJson(seed);
      for (const text of [JSON.stringify(v), JSON.stringify(v, null, 2)]) {
        expect(scanJson(text, Infinity)?.values, text).toBe(countValues(JSON.parse(text)));
      }
    }
  });

  it(`refuses objects and arrays nested more than ${MAX_BODY_DEPTH} levels with 422 max_depth at the deep value`, () => {
    const nest = (levels: number) => '{"a":'.repeat(levels - 1) + '[1]' + '}'.repeat(levels - 1);
    expect(scanJson(nest(MAX_BODY_DEPTH), Infinity)).not.toBeNull();
    const err = thrown(() => scanJson(nest(MAX_BODY_DEPTH + 1), Infinity));
    expect(err.status).toBe(422);
    expect(err.errors).toEqual({ ['/a'.repeat(MAX_BODY_DEPTH)]: [{ code: 'max_depth', message: `must not be nested more than ${MAX_BODY_DEPTH} levels deep` }] });
    // Not closed, so not JSON either: the cap is what answers, at the 33rd bracket.
    expect(thrown(() => scanJson('['.repeat(1_000_000), Infinity)).errors).toHaveProperty(`/${'0/'.repeat(MAX_BODY_DEPTH - 1)}0`);
  });

  it(`refuses an object with more than ${MAX_KEYS_PER_OBJECT} keys with 422 max_properties at the object`, () => {
    const wide = (n: number) => `{"data":{${Array.from({ length: n }, (_, i) => `"k${i}":0`).join(',')}}}`;
    expect(scanJson(wide(MAX_KEYS_PER_OBJECT), Infinity)).not.toBeNull();
    const err = thrown(() => scanJson(wide(MAX_KEYS_PER_OBJECT + 1), Infinity));
    expect(err.status).toBe(422);
    expect(err.errors).toEqual({ '/data': [{ code: 'max_properties', message: `must not have more than ${MAX_KEYS_PER_OBJECT} keys` }] });
    // One key repeated counts each time (and so stops at the same cap).
    expect(thrown(() => scanJson(`{${'"a":1,'.repeat(MAX_KEYS_PER_OBJECT)}"a":1}`, Infinity)).errors).toHaveProperty('/');
  });

  it('refuses more JSON values than the cap with 413 payload_too_large naming the cap', () => {
    expect(scanJson('[0,0,0]', 4)?.values).toBe(4);
    const err = thrown(() => scanJson('[0,0,0,0]', 4));
    expect(err.code).toBe('payload_too_large');
    expect(err.message).toBe('The body has more than 4 JSON values');
  });

  it('grows the value cap with limits.broadcastMessages and never goes below its floor', () => {
    expect(maxBodyValues(1)).toBe(MIN_MAX_BODY_VALUES);
    expect(maxBodyValues(10_000)).toBe(1_000_000);
    expect(maxBodyValues(1_000_000)).toBe(100_000_000);
  });

  it('finds a duplicate key in a small object and in a wide one, by pointer', () => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',');
    const dups = (text: string) => Object.keys(scanJson(text, Infinity)!.keyProblems.toJSON());
    expect(dups(`{"o":{${keys(3)},"k1":0},"p":{${keys(3)}}}`)).toEqual(['/o/k1']);
    expect(dups(`[{${keys(40)},"k3":0,"k39":0,"k40":0}]`)).toEqual(['/0/k3', '/0/k39']);
  });

  it('answers null for texts that cannot be JSON, and the parser calls them invalid_json', () => {
    for (const text of ['"never closed', '{"a": "b\\"}', '}', '1, 2', '{"\\x": 1}', '[1]]']) {
      expect(scanJson(text, Infinity), text).toBeNull();
      expect(thrown(() => parseJsonBody(text, true, Infinity)).code, text).toBe('invalid_json');
    }
  });

  it(`lists the first ${MAX_FIELD_ERRORS} duplicate keys and counts the rest`, () => {
    const text = `[${Array.from({ length: 5000 }, () => '{"a":1,"a":2}').join(',')}]`;
    const err = thrown(() => parseJsonBody(text, true, Infinity));
    expect(err.code).toBe('validation_failed');
    expect(Object.keys(err.errors!)).toHaveLength(MAX_FIELD_ERRORS);
    expect(err.errors!['/0/a']).toEqual([{ code: 'duplicate', message: 'the key appears more than once in this object' }]);
    expect(err.errorsOmitted).toBe(5000 - MAX_FIELD_ERRORS);
  });
});
