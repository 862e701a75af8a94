/**
 * Mutations of JSON request bodies: values with our field names as keys and hostile leaves,
 * and structural edits of a valid body (fields dropped, retyped, replaced, deep nesting,
 * unknown and prototype keys).
 */
import fc from 'fast-check';
import { hostileString } from './common.js';

export const KEY_NAMES = [
  'from', 'to', 'cc', 'bcc', 'replyTo', 'subject', 'html', 'text', 'template', 'tracking', 'attachments', 'tags', 'headers',
  'metadata', 'messages', 'data', 'email', 'name', 'content', 'fileName', 'contentType', 'contentId', 'disposition', 'links',
  'opens', 'deliveryType', 'channelId', 'channelIds', 'mailType', 'emails', 'url', 'events', 'enabled', 'additionalHeaders',
  'dkimAlgorithm', 'inlineStyles', 'value', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '',
];

export const hostileNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -0, 0.5));

/** JSON values with our field names as keys, hostile strings and numbers as leaves. */
export const jsonish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...KEY_NAMES), fc.string({ maxLength: 8 })), tie('value'), { maxKeys: 5 }),
  ),
})).value;

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A mutation of a JSON value, applied at the pick-th node in a fixed walk order. */
export interface Mutation {
  pick: number;
  kind: 'delete' | 'replace' | 'addKey' | 'wrap' | 'deep' | 'emptyContainer' | 'stringify';
  value: unknown;
  key: string;
  depth: number;
}

export const mutation: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  kind: fc.constantFrom('delete', 'replace', 'replace', 'replace', 'addKey', 'wrap', 'deep', 'emptyContainer', 'stringify'),
  value: jsonish,
  key: fc.oneof(fc.constantFrom(...KEY_NAMES), fc.string({ maxLength: 10 })),
  depth: fc.oneof(fc.integer({ min: 2, max: 64 }), fc.integer({ min: 500, max: 1500 })),
});

/** Every node of v in pre-order (iterative: values may be nested deeper than the stack). */
function nodes(root: Json): Array<{ parent: Json[] | Record<string, Json> | null; key: string | number }> {
  const out: Array<{ parent: any; key: string | number }> = [];
  const todo: Array<{ v: Json; parent: any; key: string | number }> = [{ v: root, parent: null, key: '' }];
  while (todo.length > 0) {
    const { v, parent, key } = todo.pop()!;
    out.push({ parent, key });
    if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) todo.push({ v: v[i], parent: v, key: i });
    else if (v && typeof v === 'object') for (const k of Object.keys(v).reverse()) todo.push({ v: v[k], parent: v, key: k });
  }
  return out;
}

function nest(depth: number, leaf: Json): Json {
  let v: Json = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

/** Applies mutations to a copy; the root may be replaced. */
export function mutate(base: Json, muts: Mutation[]): Json {
  let root: Json = structuredClone(base);
  let deepDone = false;
  for (const m of muts) {
    // One deep nesting per body: stacked ones would only test this file's JSON.stringify.
    if (m.kind === 'deep' && deepDone) continue;
    deepDone ||= m.kind === 'deep';
    const all = nodes(root);
    const { parent, key } = all[m.pick % all.length];
    const get = (): Json => (parent === null ? root : (parent as any)[key]);
    const set = (v: Json | undefined) => {
      if (parent === null) root = v === undefined ? null : v;
      else if (v === undefined) {
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete (parent as any)[key];
      } else (parent as any)[key] = v;
    };
    const current = get();
    switch (m.kind) {
      case 'delete':
        set(undefined);
        break;
      case 'replace':
        set(m.value as Json);
        break;
      case 'addKey':
        if (current && typeof current === 'object' && !Array.isArray(current)) {
          // defineProperty, so "__proto__" becomes an own key, as JSON.parse would make it
          Object.defineProperty(current, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
        } else if (Array.isArray(current)) current.push(m.value as Json);
        break;
      case 'wrap':
        set([current]);
        break;
      case 'deep':
        set(nest(m.depth, current));
        break;
      case 'emptyContainer':
        set(Array.isArray(current) ? [] : {});
        break;
      case 'stringify':
        set(JSON.stringify(current) ?? 'undefined');
        break;
    }
  }
  return root;
}
