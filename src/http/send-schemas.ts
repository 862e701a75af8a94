/**
 * JSON Schemas of the send bodies (spec 4.10, 4.11). They check structure and the simple limits
 * of spec section 8 so Ajv reports every violation with its pointer; rules that span fields
 * (recipient totals, template XOR content, header sizes, attachment types) are in
 * src/domain/send-rules.ts.
 */
import { MEDIA_TYPE_PATTERN } from '../domain/media-type.js';
import { NO_CONTROL_CHARS, trackingSchema } from './schemas.js';

const address = {
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: {
    email: { type: 'string', minLength: 3, maxLength: 254 },
    name: { type: 'string', maxLength: 256, pattern: NO_CONTROL_CHARS },
  },
} as const;

const addressList = (max: number) => ({ type: 'array', maxItems: max, items: address }) as const;

export const tagsSchema = {
  type: 'array',
  maxItems: 5,
  items: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]*$' },
} as const;

export const metadataSchema = {
  type: 'object',
  maxProperties: 10,
  propertyNames: { maxLength: 50, minLength: 1, pattern: NO_CONTROL_CHARS },
  // Control characters (CR/LF above all) are refused in values as in keys: metadata goes out in
  // events and webhook payloads, where a line break could forge log lines or headers downstream.
  additionalProperties: { type: ['string', 'number', 'boolean'], maxLength: 100, pattern: NO_CONTROL_CHARS },
} as const;

export const headersSchema = {
  type: 'object',
  maxProperties: 50,
  additionalProperties: { type: 'string' },
} as const;

const attachment = {
  type: 'object',
  additionalProperties: false,
  required: ['content', 'fileName'],
  properties: {
    // Not empty and base64: checked in domain/send-rules.ts (normalizeAttachments), in linear time.
    content: { type: 'string' },
    fileName: { type: 'string', minLength: 1, maxLength: 255, pattern: NO_CONTROL_CHARS },
    contentId: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^\\s<>"\\u0000-\\u001f]*$' },
    contentType: { type: 'string', maxLength: 255, pattern: MEDIA_TYPE_PATTERN },
    disposition: { type: 'string', enum: ['attachment', 'inline'] },
  },
} as const;

/**
 * A send's template: inline (`subject`, `html`, `text`, `inlineStyles`) or a stored one named
 * by `id` or `alias` (issue 34), with `version` (the active one by default); `data` for both.
 * One schema allows the fields of both, and send-rules.ts checkTemplateInput says which may go
 * together with a field error per field: a oneOf would answer a mixed body with the errors of
 * both branches, none of them naming the actual problem.
 */
export const templateSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    // The rendered subject is made header-safe in the worker; a line break in the template
    // itself is refused here like one in a plain subject.
    subject: { type: 'string', maxLength: 2048, pattern: NO_CONTROL_CHARS, description: 'Inline template: the subject (Handlebars)' },
    html: { type: 'string', description: 'Inline template: the HTML part (Handlebars, {{var}} escaped)' },
    text: { type: 'string', description: 'Inline template: the text part (Handlebars)' },
    inlineStyles: { type: 'boolean', description: 'Inline template: move <style> rules into style attributes' },
    id: { type: 'string', format: 'uuid', description: 'Stored template: its id (not with alias, nor with the inline parts)' },
    alias: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[a-z0-9][a-z0-9._-]*$', description: 'Stored template: its alias (not with id)' },
    version: { type: 'integer', minimum: 1, maximum: 1_000_000, description: 'Stored template: the version to send (default: the active one)' },
    data: { type: 'object', description: 'The template variables' },
  },
} as const;

export const transactionalBody = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to'],
  properties: {
    from: address,
    to: addressList(50),
    cc: addressList(50),
    bcc: addressList(50),
    replyTo: addressList(10),
    subject: { type: 'string', maxLength: 256, pattern: NO_CONTROL_CHARS },
    html: { type: 'string' },
    text: { type: 'string' },
    template: templateSchema,
    tracking: trackingSchema,
    attachments: { type: 'array', maxItems: 20, items: attachment },
    tags: tagsSchema,
    headers: headersSchema,
    metadata: metadataSchema,
    // Its format (RFC 3339 with offset) and range are checked with the other field rules
    // (domain/schedule.ts), so every problem of the request comes back in one 422.
    scheduledAt: { type: 'string', maxLength: 64 },
  },
} as const;

export function broadcastBody(maxMessages: number) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['from', 'template', 'messages'],
    properties: {
      from: address,
      template: templateSchema,
      messages: {
        // "at least one" is checked with the template rules so both problems come back in one 422.
        type: 'array',
        maxItems: maxMessages,
        items: {
          type: 'object',
          additionalProperties: false,
          properties: {
            to: addressList(50),
            cc: addressList(50),
            bcc: addressList(50),
            tags: tagsSchema,
            headers: headersSchema,
            metadata: metadataSchema,
            data: { type: 'object' },
          },
        },
      },
      replyTo: addressList(10),
      tracking: trackingSchema,
      attachments: { type: 'array', maxItems: 20, items: attachment },
      tags: tagsSchema,
      headers: headersSchema,
      metadata: metadataSchema,
      // The whole broadcast's time, checked as a message's (transactionalBody above).
      scheduledAt: { type: 'string', maxLength: 64, description: 'RFC 3339 date-time with offset: no message of the broadcast is delivered before; at most limits.maxScheduleDays ahead' },
    },
  } as const;
}
