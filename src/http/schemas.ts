/** JSON Schemas shared by several routes (also the source of the OpenAPI document). */
import { DKIM_ALGORITHMS } from '../domain/sending-domain.js';

/** Printable text: no ASCII control characters (CR/LF would let a value smuggle header lines). */
export const NO_CONTROL_CHARS = '^[^\\u0000-\\u001f\\u007f]*$';

export const trackingSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { links: { type: 'boolean' }, opens: { type: 'boolean' } },
} as const;

export const deliveryTypeSchema = { type: 'string', enum: ['live', 'sandbox'] } as const;

export const dkimAlgorithmSchema = { type: 'string', enum: DKIM_ALGORITHMS } as const;

/**
 * The optional body of POST /domains/{id}/rotate-key, for the OpenAPI document (contract.ts);
 * routes/domains.ts checks it in code, as a route schema would also refuse a request without a body.
 */
export const rotateKeyBody = { type: 'object', additionalProperties: false, properties: { dkimAlgorithm: dkimAlgorithmSchema } } as const;

/** limit/offset paging of list endpoints (spec 4.2: default 25, at most 500). */
export const pagingProperties = {
  limit: { type: 'integer', minimum: 1, maximum: 500 },
  offset: { type: 'integer', minimum: 0, maximum: 2_147_483_647 },
} as const;

/** Spec section 4: array query parameters are one comma-separated value. */
export function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
