/**
 * HTTP request bodies (issue 29, item 2): the JSON pre-scan alone, and the whole path a body takes
 * before a handler (pre-scan, JSON.parse, key checks, the two-pass schema validation, the 422 a
 * client gets), on the worst bodies http.bodyLimit (40 MiB) lets through, with the default caps.
 *
 * The pre-scan either stops at the cap a body crosses (in the characters it took to get there) or
 * reads the text once. JSON.parse then reads it once more and builds what the caps allow; a 40 MiB
 * string takes it tens of milliseconds on its own, so the whole path on such a body gets
 * FULL_PATH_BUDGET_MS. Still far below what a superlinear step would take at 40 MiB (the old path
 * spent 5.5 s on 10 MiB of tiny keys, in Ajv's allErrors report).
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import { parseJsonBody } from '../../src/http/json-body.js';
import { maxBodyValues, scanJson } from '../../src/http/json-scan.js';
import { toProblem } from '../../src/http/problem.js';
import { BodyValidators } from '../../src/http/validators.js';
import { broadcastBody } from '../../src/http/send-schemas.js';
import { MiB, repeatTo, withinBudget } from '../support/worst-case.js';

const BODY_LIMIT = 40 * MiB;
const MAX_VALUES = maxBodyValues(10_000);

/**
 * JSON.parse is linear but not free: a 40 MiB string is 40 MB to build, and a million empty objects
 * took it 150-300 ms on the 2-core CI machine (its own allocation and garbage collection). The
 * whole path may take that; the default budget would measure the machine, not the code.
 */
const FULL_PATH_BUDGET_MS = 1_000;

/**
 * A body as the server holds it: one flat string decoded from the received bytes (a concatenated
 * string would be flattened, a 40 MB copy, by whatever reads it first, and that is not the parse).
 */
const asReceived = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

/** `head` + `unit` repeated + `tail`, exactly BODY_LIMIT long. */
const fill = (head: string, unit: string, tail: string) => asReceived(head + repeatTo(unit, BODY_LIMIT - head.length - tail.length) + tail);

/** `count` copies of `unit` in an array. */
const array = (unit: string, count: number) => asReceived(`[${Array.from({ length: count }, () => unit).join(',')}]`);

const WORST: Record<string, string> = {
  '40 MiB of tiny keys': fill('{', '"k":0,', '"z":0}'),
  '40 MiB of distinct tiny keys': asReceived('{' + Array.from({ length: 4_000_000 }, (_, i) => `"${i.toString(36)}":0`).join(',').slice(0, BODY_LIMIT - 10) + ':0}'),
  '40 MiB of [[[[': repeatTo('[', BODY_LIMIT),
  '40 MiB of one key repeated in nested objects': fill('[', '{"a":1,"a":1},', '{}]'),
  '40 MiB of empty objects': fill('[', '{},', '{}]'),
  '40 MiB of zeros': fill('[', '0,', '0]'),
  'a 40 MiB string of escaped quotes': fill('{"name":"', '\\"', '"}'),
  'a 40 MiB string of \\u escapes': fill('{"name":"', '\\u00e9', '"}'),
  'a 40 MiB string of backslashes': fill('{"name":"', '\\\\', '"}'),
  '40 MiB of whitespace': fill('{', ' ', '}'),
  'a number of 40 MiB of digits': fill('[', '1', ']'),
  'a 40 MiB key': fill('{"', 'k', '":1}'),
  // The most objects JSON.parse is let build: one below the value cap.
  'as many empty objects as the value cap allows': array('{}', MAX_VALUES - 1),
  'as many one-key objects as the value cap allows': array('{"a":"b"}', MAX_VALUES / 2 - 1),
};

const validate = new BodyValidators().compile(broadcastBody(10_000));

/** The body's whole way to a handler, as server.ts wires it: parse, then validate, then the problem. */
function fullPath(text: string): unknown {
  try {
    const { value, values } = parseJsonBody(text, true, MAX_VALUES);
    if (validate(value, values)) return 'valid';
    return validate.errors?.length;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return JSON.stringify(toProblem(err as AppError, { publicUrl: 'http://x', instance: 'POST /send/broadcast', requestId: 'r' })).length;
  }
}

describe('HTTP bodies at the body limit', () => {
  for (const [what, text] of Object.entries(WORST)) {
    it(`pre-scans ${what}`, () => {
      expect(text.length).toBeLessThanOrEqual(BODY_LIMIT);
      withinBudget(`the pre-scan of ${what}`, () => {
        try {
          scanJson(text, MAX_VALUES);
        } catch (err) {
          expect(err).toBeInstanceOf(AppError);
        }
      });
    });

    it(`takes ${what} from text to answer within the budget, with a small answer`, () => {
      const answer = withinBudget(`parse and validate ${what}`, () => fullPath(text), FULL_PATH_BUDGET_MS);
      if (typeof answer === 'number') expect(answer).toBeLessThan(64 * 1024);
    });
  }
});
