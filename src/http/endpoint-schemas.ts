/**
 * The request schemas of an endpoint postrider POSTs to, shared by /webhooks and
 * /inbound/routes (issue 33) so that both validate a URL and additional headers alike, with the
 * same errors (the checks made in code are webhooks/endpoint-check.ts).
 */
import { HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN } from '../domain/webhook.js';
import { MAX_URL_LENGTH } from '../webhooks/targets.js';

export const urlSchema = { type: 'string', minLength: 1, maxLength: MAX_URL_LENGTH } as const;

export const headersSchema = {
  type: 'array',
  maxItems: 20,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'value'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100, pattern: HEADER_NAME_PATTERN },
      value: { type: 'string', maxLength: 2000, pattern: HEADER_VALUE_PATTERN },
    },
  },
} as const;

/** What a channel-level key sees in place of an additionalHeaders value (often a credential). */
export const MASKED_HEADER_VALUE = '********';
