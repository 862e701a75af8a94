/**
 * Builders for the kinds of configuration keys. Each returns a TypeBox schema whose JSON Schema
 * keywords carry the validation (type, range, pattern, enum), the default and the documentation
 * (`description`), so schema.ts states every key once. Keywords of our own, which TypeBox keeps
 * on the schema and ignores when it checks a value:
 *
 * - `duration`: the value is milliseconds, also accepted as text such as "30s" (domain/duration.ts);
 * - `errorMessage`: what a value that fails the pattern is told (it follows the key's name);
 * - `refine`: a check or normalisation that JSON Schema cannot state (refine.ts);
 * - `defaultFrom`: a default that depends on the machine, computed when the config is loaded.
 */
import { Type, type StringOptions, type TLiteral, type TUnion } from '@sinclair/typebox';
import type { RefinerName } from './refine.js';

/** The keywords of our own, beside JSON Schema's. */
export interface KeyKeywords {
  description: string;
  default?: unknown;
  duration?: boolean;
  errorMessage?: string;
  refine?: RefinerName;
  defaultFrom?: 'machineHostname';
  /** Shown in the example config where the default depends on the machine. */
  examples?: unknown[];
  /**
   * A credential: `config print` masks it ('value': all of it; 'url-password': the password of
   * a URL), so its output can be pasted into a ticket or a chat.
   */
  secret?: 'value' | 'url-password';
}

/** A non-empty text (after trimming): addresses, paths. */
export function text(def: string, description: string) {
  return Type.String({ default: def, description, pattern: '\\S' });
}

/** A text that may be empty, empty meaning "feature off" or "derive it". */
export function optionalText(description: string, more: StringOptions & Partial<KeyKeywords> = {}) {
  return Type.String({ default: '', description, ...more });
}

/** A text checked by a regular expression (JSON Schema `pattern`, no flags). */
export function patterned(def: string, description: string, pattern: string, errorMessage: string, refine?: RefinerName) {
  return Type.String({ default: def, description, pattern, errorMessage, refine });
}

export function integer(min: number, max: number, def: number, description: string) {
  return Type.Integer({ minimum: min, maximum: max, default: def, description });
}

export function port(def: number, description: string) {
  return integer(0, 65535, def, description);
}

export function flag(def: boolean, description: string) {
  return Type.Boolean({ default: def, description });
}

/**
 * The longest delay a Node timer takes (2^31 - 1 ms, 24.8 days): a longer one fires after 1 ms
 * (TimeoutOverflowWarning), so a re-check interval of "30d" would run back to back.
 */
export const TIMER_MAX_MS = 2_147_483_647;

/**
 * Milliseconds of at least `minMs`, written as a number or as "30s", "5m", "6h". A duration is
 * a timer's delay unless `maxMs` says otherwise: a smaller bound of its own, or null for an age
 * only compared with timestamps (delivery.maxAgeMs), which may be longer than any timer.
 */
export function duration(minMs: number, def: number, description: string, maxMs: number | null = TIMER_MAX_MS) {
  return Type.Number({ minimum: minMs, ...(maxMs === null ? {} : { maximum: maxMs }), default: def, description, duration: true });
}

/** One of a fixed set of words; the type is their union. */
export function oneOf<const T extends readonly string[]>(values: T, def: T[number], description: string): TUnion<Literals<T>> {
  // The declared return type keeps each word's literal type, so Config has the union, not `string`.
  return Type.Union(values.map((v) => Type.Literal(v)), { default: def, description }) as unknown as TUnion<Literals<T>>;
}

type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };

/** A list of texts, written as a JSON array or as one comma-separated text (the environment). */
export function list(description: string, item: ReturnType<typeof Type.String> = Type.String()) {
  return Type.Array(item, { default: [], description });
}

// An MX host name suffix: DNS labels, optionally after "*." or "." (RFC 1035 2.3.1).
const MX_SUFFIX = '^(\\*\\.|\\.)?[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\\.?$';

/**
 * Limits per MX site keyed by MX host name suffix (delivery.sites): an object in the config
 * file, a JSON object text in the environment. Unknown suffix syntax or limit names are errors.
 */
export function siteOverrides(description: string) {
  const limits = Type.Object(
    {
      concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
      maxMessagesPerConnection: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
    },
    { additionalProperties: false },
  );
  return Type.Record(Type.String({ pattern: MX_SUFFIX }), limits, { default: {}, description, additionalProperties: false });
}

// A source's or a pool's name: letters, digits, "-" and "_" (it appears in logs, metrics and the API).
const SOURCE_NAME = '^[a-zA-Z0-9][a-zA-Z0-9_-]{0,62}$';

/**
 * delivery.sources: the local addresses outgoing connections are bound to, each with its EHLO
 * name (issue 35). A JSON array of objects in the file, its JSON text in the environment; the
 * addresses and the names' uniqueness are checked with the pools (sending-ips.ts).
 */
export function sendingSources(description: string) {
  const source = Type.Object(
    {
      name: Type.String({ pattern: SOURCE_NAME }),
      address: Type.String({ minLength: 2 }),
      ehloName: Type.Optional(Type.String({ minLength: 1 })),
      // Messages per second from this source at the receivers; delivery.rate when absent.
      rate: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
      // The warm-up plan (domain/warmup-plan.ts): numbers are only numbers here, so that every
      // wrong day of every curve is named at once by warmupProblems, with the other sources' problems.
      warmup: Type.Optional(
        Type.Object(
          {
            start: Type.String(),
            curve: Type.Optional(Type.Array(Type.Number())),
            sites: Type.Optional(Type.Record(Type.String(), Type.Array(Type.Number()))),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  );
  return Type.Array(source, { default: [], description });
}

/** delivery.pools: {name: [{source, weight}]}, weights as whole numbers (smooth weighted round robin). */
export function sendingPools(description: string) {
  const member = Type.Object(
    { source: Type.String({ pattern: SOURCE_NAME }), weight: Type.Integer({ minimum: 1, maximum: 1000 }) },
    { additionalProperties: false },
  );
  return Type.Record(Type.String({ pattern: SOURCE_NAME }), Type.Array(member), { default: {}, description, additionalProperties: false });
}

/**
 * delivery.shaping.rules: the operator's automatic shaping rules (domain/shaping-rules.ts),
 * checked before the built-in ones. The pattern, the provider, the ids and the duration are
 * checked with the rest of delivery.shaping when the config is loaded (shaping-match.ts).
 */
export function shapingRules(description: string) {
  const rule = Type.Object(
    {
      id: Type.String({ pattern: SOURCE_NAME }),
      provider: Type.Optional(Type.String({ minLength: 1 })),
      suffixes: Type.Optional(Type.Array(Type.String({ pattern: MX_SUFFIX }), { minItems: 1 })),
      match: Type.Optional(Type.String({ minLength: 1 })),
      enhancedCode: Type.Optional(Type.String({ minLength: 1 })),
      action: Type.Union([Type.Literal('suspend'), Type.Literal('ceiling')]),
      concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
      perSecond: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100_000 })),
      duration: Type.String({ minLength: 1 }),
    },
    { additionalProperties: false },
  );
  return Type.Array(rule, { default: [], description });
}
