/**
 * Field errors are said in our words, never Ajv's (`must NOT have more than 50 items`), for every
 * keyword the route schemas use; unknown fields named as other providers name them get a
 * "did you mean" hint (issue 30).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MEDIA_TYPE_PATTERN } from '../../src/domain/media-type.js';
import { HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN } from '../../src/domain/webhook.js';
import { didYouMean } from '../../src/http/field-hints.js';
import { FIELD_CODES_FROM_AJV, fieldErrorsFromAjv, PATTERN_MESSAGES, type AjvErrorLike } from '../../src/http/problem.js';
import { NO_CONTROL_CHARS } from '../../src/http/schemas.js';
import { broadcastBody, transactionalBody } from '../../src/http/send-schemas.js';
import { BodyValidators } from '../../src/http/validators.js';

/** Ajv's own wordings (ajv/lib/vocabularies): none may reach a client. */
const AJV_WORDING = /must NOT|must match|must be equal|must have required|must be (string|number|integer|boolean|object|array|null)\b|must be [<>]=?|property name must|must pass|must be valid|must have property/;

const ajv = new BodyValidators().allErrors;

function errorsOf(schema: object, data: unknown) {
  const validate = ajv.compile(schema);
  expect(validate(data)).toBe(false);
  return fieldErrorsFromAjv(validate.errors as unknown as AjvErrorLike[]);
}

/** Every message of `errors`, for the wording check. */
const messages = (errors: Record<string, Array<{ message: string }>>) => Object.values(errors).flat().map((e) => e.message);

describe('field error messages', () => {
  it('say every keyword of the route schemas in our words', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      required: ['need'],
      properties: {
        list: { type: 'array', maxItems: 2, minItems: 1, uniqueItems: true },
        short: { type: 'string', minLength: 3, maxLength: 4 },
        empty: { type: 'string', minLength: 1 },
        need: {},
        n: { type: 'integer', minimum: 1, maximum: 500 },
        big: { type: 'integer', maximum: 500 },
        kind: { type: 'string', enum: ['live', 'sandbox'] },
        yes: { const: 'true' },
        id: { type: 'string', format: 'uuid' },
        at: { type: 'string', format: 'date-time' },
        mail: { type: 'string', format: 'email' },
        obj: { type: 'object', maxProperties: 1, minProperties: 1 },
        none: { type: 'object', minProperties: 2 },
        meta: { type: 'object', propertyNames: { maxLength: 3, pattern: NO_CONTROL_CHARS }, additionalProperties: { type: ['string', 'number', 'boolean'] } },
        tag: { type: 'string', pattern: '^[A-Za-z0-9_-]*$' },
        other: { type: 'string', pattern: '^x$' },
        nullable: { type: ['string', 'null'] },
        either: { anyOf: [{ type: 'string' }, { type: 'number' }] },
      },
    };
    const errors = errorsOf(schema, {
      list: [1, 1, 2],
      short: 'abcdef',
      empty: '',
      n: 1.5,
      big: 501,
      kind: 'test',
      yes: 'no',
      id: 'x',
      at: 'yesterday',
      mail: 'a@',
      obj: { a: 1, b: 2 },
      none: {},
      meta: { abcdef: [1], 'a\nb': 1 },
      tag: 'a b',
      other: 'y',
      nullable: 1,
      either: true,
      reply_to: [],
    });
    expect(messages(errors).filter((m) => AJV_WORDING.test(m))).toEqual([]);
    expect(errors).toMatchObject({
      '/need': [{ code: 'required', message: 'is required' }],
      '/list': [
        { code: 'max_items', message: 'must have at most 2 items' },
        { code: 'duplicate_items', message: 'must not have the same item twice (items 0 and 1 are equal)' },
      ],
      '/short': [{ code: 'max_length', message: 'must be at most 4 characters' }],
      '/empty': [{ code: 'min_length', message: 'must not be empty' }],
      '/n': [{ code: 'invalid_type', message: 'must be an integer' }],
      '/big': [{ code: 'max_value', message: 'must be at most 500' }],
      '/kind': [{ code: 'invalid_value', message: 'must be one of: live, sandbox' }],
      '/yes': [{ code: 'invalid_value', message: 'must be "true"' }],
      '/id': [{ code: 'invalid_format', message: 'must be a UUID' }],
      '/at': [{ code: 'invalid_format', message: expect.stringMatching(/^must be a date and time as in RFC 3339/) }],
      '/mail': [{ code: 'invalid_format', message: 'is not a valid email address' }],
      '/obj': [{ code: 'max_properties', message: 'must have at most 1 field' }],
      '/none': [{ code: 'min_properties', message: 'must have at least 2 fields' }],
      '/meta': [
        { code: 'max_length', message: 'key "abcdef": must be at most 3 characters' },
        { code: 'invalid_format', message: 'key "a\\nb": must not contain control characters (line breaks included)' },
      ],
      '/meta/abcdef': [{ code: 'invalid_type', message: 'must be a string, a number or true or false' }],
      '/tag': [{ code: 'invalid_format', message: 'may contain only letters, digits, hyphens and underscores' }],
      '/other': [{ code: 'invalid_format', message: 'is not in the expected format' }],
      '/nullable': [{ code: 'invalid_type', message: 'must be a string or null' }],
      '/either': [{ code: 'invalid_type', message: 'must be a string' }, { code: 'invalid_type', message: 'must be a number' }],
      '/reply_to': [{ code: 'unknown_field', message: 'is not a known field' }],
    });
    expect(errorsOf(schema, { need: 1, n: 0 })['/n']).toEqual([{ code: 'min_value', message: 'must be at least 1' }]);
    expect(errorsOf(schema, { need: 1, short: 'a', list: [] })).toEqual({
      '/short': [{ code: 'min_length', message: 'must be at least 3 characters' }],
      '/list': [{ code: 'min_items', message: 'must have at least 1 item' }],
    });
  });

  it('cover every keyword that has a code', () => {
    for (const keyword of Object.keys(FIELD_CODES_FROM_AJV)) {
      const [message] = messages(fieldErrorsFromAjv([{ keyword, instancePath: '/x', params: { limit: 2, allowedValues: ['a'], type: 'string', format: 'uuid', pattern: NO_CONTROL_CHARS, missingProperty: 'y', additionalProperty: 'z', allowedValue: 'a', i: 1, j: 0 } }]));
      expect(message, keyword).not.toBe('is invalid');
      expect(message, keyword).not.toMatch(AJV_WORDING);
    }
  });

  it('say in words every pattern the route schemas use', () => {
    const constants: Record<string, string> = { NO_CONTROL_CHARS, HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN, MEDIA_TYPE_PATTERN };
    const files = ['src/http', 'src/http/routes'].flatMap((d) => fs.readdirSync(d).filter((f) => f.endsWith('.ts')).map((f) => path.join(d, f)));
    const patterns: string[] = [];
    for (const file of files) {
      if (/response-schemas|contract/.test(file)) continue; // what we answer, never a client's error
      for (const m of fs.readFileSync(file, 'utf8').matchAll(/pattern: ('(?:[^'\\]|\\.)*'|[A-Z_]+)\b/g)) {
        patterns.push(m[1].startsWith("'") ? (new Function(`return ${m[1]}`)() as string) : constants[m[1]]);
      }
    }
    expect(patterns.length).toBeGreaterThanOrEqual(8);
    expect(patterns.filter((p) => PATTERN_MESSAGES[p] === undefined)).toEqual([]);
  });

  it('never repeat Ajv on the send bodies, whatever is wrong', () => {
    const tooMany = (n: number) => Array.from({ length: n }, (_, i) => ({ email: `a${i}@x.org`, extra: 1 }));
    const body = {
      from: { email: 'x', name: 'a\r\nb' },
      to: tooMany(51),
      subject: 's'.repeat(300),
      tags: ['a b', '', 'c', 'd', 'e', 'f'],
      metadata: Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`.repeat(20), { nested: true }])),
      attachments: [{ content: '', fileName: 'a\nb', contentType: 'pdf', disposition: 'attached', contentId: '<x>' }],
      tracking: { opens: 'yes' },
      template: { subject: 1, data: [] },
      headers: { 'X-A': 1 },
    };
    for (const schema of [transactionalBody, broadcastBody(100)]) {
      const all = messages(errorsOf(schema, body));
      expect(all.length).toBeGreaterThan(15);
      expect(all.filter((m) => AJV_WORDING.test(m))).toEqual([]);
    }
    expect(errorsOf(transactionalBody, body)['/to']).toEqual([{ code: 'max_items', message: 'must have at most 50 items' }]);
  });
});

describe('"did you mean" hints for unknown fields', () => {
  const hintOf = (body: Record<string, unknown>, schema: object = transactionalBody) => {
    const errors = errorsOf(schema, { from: { email: 'a@b.org' }, to: [], ...body });
    return Object.fromEntries(Object.entries(errors).map(([k, v]) => [k, v.map((e) => `${e.code}: ${e.message}`).join('; ')]));
  };

  it('name our field for other providers\' names and other spellings', () => {
    const cases: Record<string, string> = {
      reply_to: 'replyTo',
      replyto: 'replyTo',
      ReplyTo: 'replyTo',
      'reply-to': 'replyTo',
      from_email: 'from',
      fromEmail: 'from',
      html_body: 'html',
      htmlBody: 'html',
      HtmlBody: 'html',
      text_body: 'text',
      TextBody: 'text',
      template_id: 'template.id',
      TemplateAlias: 'template.alias',
      TemplateModel: 'template.data',
      dynamic_template_data: 'template.data',
      Tag: 'tags',
      categories: 'tags',
      custom_args: 'metadata',
      TrackOpens: 'tracking.opens',
      track_clicks: 'tracking.links',
      'o:tag': 'tags',
      Attachments: 'attachments',
      Subject: 'subject',
      CC: 'cc',
    };
    for (const [name, field] of Object.entries(cases)) {
      expect(hintOf({ [name]: 1 })[`/${name}`], name).toMatch(new RegExp(`^unknown_field: is not a known field; did you mean "${field.replace('.', '\\.')}"\\?`));
    }
    expect(hintOf({ template_id: 'welcome' })['/template_id']).toContain('a stored template is named inside template: {id | alias, version?, data}');
    // Inside the template object, its own fields: id and alias.
    const inside = hintOf({ template: { template_id: 'x', TemplateAlias: 'welcome', data: {} } });
    expect([inside['/template/template_id'], inside['/template/TemplateAlias']]).toEqual([
      expect.stringContaining('did you mean "id"?'),
      expect.stringContaining('did you mean "alias"?'),
    ]);
  });

  it('hint inside attachments and addresses, by the fields of that object', () => {
    const errors = hintOf({ attachments: [{ content: 'eA==', fileName: 'a.txt', Name: 'a', type: 'text/plain', file_name: 'x' }], cc: [{ email: 'a@b.org', address: 'x' }] });
    expect(errors['/attachments/0/Name']).toContain('did you mean "fileName"?');
    expect(errors['/attachments/0/file_name']).toContain('did you mean "fileName"?');
    expect(errors['/attachments/0/type']).toContain('did you mean "contentType"?');
    expect(errors['/cc/0/address']).toContain('did you mean "email"?');
  });

  it('give no hint for a field the object does not have', () => {
    const channel = { type: 'object', additionalProperties: false, properties: { name: { type: 'string' } } };
    expect(errorsOf(channel, { reply_to: 'x', Name: 'y', zzz: 1 })).toEqual({
      '/reply_to': [{ code: 'unknown_field', message: 'is not a known field' }],
      '/Name': [{ code: 'unknown_field', message: 'is not a known field; did you mean "name"?' }],
      '/zzz': [{ code: 'unknown_field', message: 'is not a known field' }],
    });
    expect(didYouMean('x'.repeat(1000), ['x'])).toBeUndefined();
    expect(didYouMean('replyTo', ['replyTo'])).toBeUndefined();
  });

  it('finds no hint in what every object inherits (a key named constructor was a 500, found by fuzzing)', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'Constructor']) {
      expect(didYouMean(name, ['from', 'to', 'subject']), name).toBeUndefined();
    }
    expect(hintOf({ constructor: { x: 1 } })['/constructor']).toBe('unknown_field: is not a known field');
  });
});
