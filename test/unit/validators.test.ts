import { describe, expect, it } from 'vitest';
import { BodyValidators, FULL_REPORT_MAX_VALUES, valuesUpTo } from '../../src/http/validators.js';

const schema = { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string' } } };

describe('the body validators', () => {
  it('pass a valid body, report every error of a small invalid one and the first of a large one', () => {
    const validate = new BodyValidators().compile(schema);
    expect(validate({ name: 'x' }, 2)).toBe(true);
    expect(validate.errors).toBeNull();
    const bad = { a: 1, b: 2 };
    expect(validate(bad, 3)).toBe(false);
    expect(validate.errors).toHaveLength(3);
    expect(validate(bad, FULL_REPORT_MAX_VALUES + 1)).toBe(false);
    expect(validate.errors).toHaveLength(1);
  });

  it('count the values of a part of a body up to a limit, without walking the rest', () => {
    expect(valuesUpTo({ a: [1, 2, { b: null }], c: 'x' }, 100)).toBe(7);
    expect(valuesUpTo(Array.from({ length: 1_000_000 }, () => [0]), 10)).toBe(10);
  });
});
