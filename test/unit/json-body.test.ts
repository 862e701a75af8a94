import { describe, expect, it } from 'vitest';
import { parseJsonBody } from '../../src/http/json-body.js';
import { scanJson } from '../../src/http/json-scan.js';

const problems = (text: string) => scanJson(text, Infinity)!.keyProblems.toJSON();
const parse = (text: string, bodyExpected: boolean) => parseJsonBody(text, bodyExpected, Infinity).value;

describe('the JSON body parser', () => {
  it('finds duplicate keys at any depth, with escapes, and not across sibling objects', () => {
    expect(problems('{"a": 1, "a": 2}')).toEqual({ '/a': [{ code: 'duplicate', message: expect.any(String) }] });
    expect(Object.keys(problems('{"x": [{"k": 1}, {"k": 2, "\\u006b": 3}]}'))).toEqual(['/x/1/k']);
    expect(problems('{"to": [{"email": "a"}, {"email": "b"}], "o": {"email": "c"}}')).toEqual({});
    expect(problems('{"s": "a \\" \\\\", "t": "{\\"t\\": 1}", "u": 1}')).toEqual({});
    expect(Object.keys(problems('{"a~b/c": 1, "a~b/c": 2}'))).toEqual(['/a~0b~1c']);
  });

  it('refuses __proto__ anywhere and prototype inside constructor', () => {
    expect(Object.keys(problems('{"m": {"__proto__": {}}}'))).toEqual(['/m/__proto__']);
    expect(Object.keys(problems('[{"constructor": {"prototype": 1}}]'))).toEqual(['/0/constructor/prototype']);
    expect(problems('{"prototype": 1, "constructor": "x"}')).toEqual({});
  });

  it('reads an empty body as none where the route takes no body', () => {
    expect(parse('', false)).toBeUndefined();
    expect(() => parse('', true)).toThrow();
  });
});
