import { describe, expect, it } from 'vitest';
import { nullableOptionals, nullStripper } from '../../src/http/null-fields.js';

const schema = {
  type: 'object',
  required: ['id'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    pool: { type: ['string', 'null'] },
    kind: { enum: ['a', 'b'] },
    data: { type: 'object' },
    map: { type: 'object', additionalProperties: { type: 'string' } },
    list: { type: 'array', items: { type: 'object', required: ['email'], properties: { email: { type: 'string' }, name: { type: 'string' } } } },
  },
} as const;

describe('null as the absence of an optional field', () => {
  it('drops the nulls of optional fields at any depth, and keeps required, nullable and free-form ones', () => {
    const body = {
      id: null,
      name: null,
      pool: null,
      kind: null,
      data: { x: null, name: null },
      map: { h: null },
      list: [{ email: null, name: null }, null],
      unknown: null,
    };
    nullStripper(schema)!(body);
    expect(body).toEqual({ id: null, pool: null, data: { x: null, name: null }, map: { h: null }, list: [{ email: null }, null], unknown: null });
  });

  it('leaves a body that is not an object, and a schema with no optional field needs no walk', () => {
    const strip = nullStripper(schema)!;
    for (const v of [null, 1, 'x', [null]]) expect(() => strip(v)).not.toThrow();
    expect(nullStripper({ type: 'object', required: ['a'], properties: { a: { type: 'string' } } })).toBeUndefined();
  });

  it('states the same fields as nullable in the document form of the schema', () => {
    const doc = nullableOptionals(schema) as any;
    expect(doc.properties.id.type).toBe('string');
    expect(doc.properties.name.type).toEqual(['string', 'null']);
    expect(doc.properties.pool.type).toEqual(['string', 'null']);
    expect(doc.properties.kind.enum).toEqual(['a', 'b', null]);
    expect(doc.properties.list.type).toEqual(['array', 'null']);
    expect(doc.properties.list.items.properties).toEqual({ email: { type: 'string' }, name: { type: ['string', 'null'] } });
    expect(schema.properties.name.type).toBe('string');
  });
});
