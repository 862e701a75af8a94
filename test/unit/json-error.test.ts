/**
 * Broken JSON is answered with where it goes wrong and what was expected (issue 30), in words of
 * our own (JSON.parse's differ between V8 versions and may quote the body).
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import { parseJsonBody } from '../../src/http/json-body.js';
import { describeJsonError, jsonSyntaxError } from '../../src/http/json-error.js';

function detailOf(text: string): string {
  try {
    parseJsonBody(text, true, 1_000_000);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('invalid_json');
    return (err as AppError).message;
  }
  throw new Error('parsed');
}

describe('the position of a JSON syntax error', () => {
  it('names the line, the column and what was expected', () => {
    expect(detailOf('{\n  "a": 1,\n    }')).toBe(
      "The body is not valid JSON: unexpected '}' at line 3, column 5 (offset 16); expected a property name in double quotes",
    );
    expect(detailOf('{\n  "a": 1\n  "b": 2\n}')).toBe(
      "The body is not valid JSON: unexpected '\"' at line 3, column 3 (offset 13); expected ',' or '}'",
    );
    expect(detailOf('{"name": "x",')).toBe(
      'The body is not valid JSON: unexpected end of input at line 1, column 14 (offset 13); expected a property name in double quotes',
    );
  });

  it('explains strings, escapes, literals, numbers and what follows the value', () => {
    const cases: Array<[string, number, string]> = [
      ['{"a":"x', 7, "'\"' to close the string"],
      ['"a\\qb"', 3, 'an escape'],
      ['"\\u12g4"', 3, 'four hex digits after \\u'],
      ['"a\u0001"', 2, 'no control character in a string'],
      ['{"a":tru}', 8, "'e' (of true)"],
      ['[1,]', 3, 'a value (an object'],
      ['[1 2]', 3, "',' or ']'"],
      ['{a:1}', 1, "a property name in double quotes or '}'"],
      ['{"a" 1}', 5, "':' after the property name"],
      ['[-]', 2, 'a digit'],
      ['{"a":1}x', 7, 'nothing after the JSON value'],
      ['[1}', 2, "',' or ']'"],
      ["{'a':1}", 1, 'a property name'],
    ];
    for (const [text, offset, expected] of cases) {
      const e = jsonSyntaxError(text);
      expect(e, text).not.toBeNull();
      expect(e!.offset, text).toBe(offset);
      expect(e!.expected, text).toContain(expected);
    }
    expect(jsonSyntaxError('"a\u0001"')!.found).toBe('character U+0001');
  });

  it('never quotes more of the body than the one character at fault', () => {
    const secret = 'sk_live_' + 'x'.repeat(40);
    expect(detailOf(`{"password": "${secret}" "more": 1}`)).not.toContain(secret);
  });

  it('agrees with JSON.parse on what is valid', () => {
    const pieces = ['{', '}', '[', ']', ',', ':', '"a"', '"\\n"', '1', '-0.5e+3', 'true', 'null', ' ', '\n', 'x', '01', '"', '\\'];
    let s = 7;
    const next = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      const len = 1 + Math.floor(next() * 8);
      for (let k = 0; k < len; k++) text += pieces[Math.floor(next() * pieces.length)];
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      expect(jsonSyntaxError(text) === null, text).toBe(valid);
    }
  });

  // Linear: a quadratic walk takes minutes on these (text.indexOf did, once warmed up on the small
  // texts above) and fails by the test's timeout; no timing is asserted on a shared machine.
  it('locates the end of a megabyte of nesting, of a string and of line feeds', () => {
    const deep = '['.repeat(1 << 20);
    expect(jsonSyntaxError(deep)!.offset).toBe(deep.length);
    expect(describeJsonError('"' + 'a\\n'.repeat(1 << 19))).toContain('line 1, column');
    expect(describeJsonError('\n'.repeat(1 << 20) + '}')).toContain(`line ${(1 << 20) + 1}, column 1`);
  });
});
