import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError, ERROR_CATALOGUE, FieldErrorList, pointerSegment, type ErrorCode } from '../../src/domain/errors.js';

/** DESIGN.md "Error codes and their statuses", for the codes of the specification's section 7. */
const SPEC_CODES: Record<string, number> = {
  invalid_json: 400,
  validation_failed: 422,
  resource_limit_exceeded: 403,
  channel_not_found: 404,
  invalid_channel: 422,
  domain_unverified: 403,
  account_forbidden: 403,
  recipient_forbidden: 403,
  recipients_suppressed: 422,
  templating_error: 422,
  send_limit_exceeded: 403,
};

/** The rows "| `code` | status | ..." of a Markdown error table, as code → status. */
function parseErrorTable(markdown: string): Map<string, number> {
  const rows = new Map<string, number>();
  for (const m of markdown.matchAll(/^\|\s*`([a-z][a-z0-9_]*)`\s*\|\s*(\d{3})\s*\|/gm)) rows.set(m[1], Number(m[2]));
  return rows;
}

/** Every catalogue code that the table lacks or lists with another status, as readable lines. */
function undocumented(table: Map<string, number>): string[] {
  return Object.entries(ERROR_CATALOGUE).flatMap(([code, entry]) => {
    if (!table.has(code)) return [`${code}: missing from docs/api.md's error table`];
    if (table.get(code) !== entry.status) return [`${code}: docs/api.md says ${table.get(code)}, the catalogue ${entry.status}`];
    return [];
  });
}

function readme(): string {
  const url = new URL('../../docs/api.md', import.meta.url);
  if (!fs.existsSync(url)) throw new Error('docs/api.md is missing');
  return fs.readFileSync(url, 'utf8');
}

describe('the error catalogue and docs/api.md', () => {
  it('documents every catalogue code in docs/api.md\'s error table with the catalogue\'s status', () => {
    const table = parseErrorTable(readme());
    expect(table.size).toBeGreaterThan(0);
    expect(undocumented(table)).toEqual([]);
  });

  it('documents no code in docs/api.md\'s error table that the catalogue does not have', () => {
    const table = parseErrorTable(readme());
    expect([...table.keys()].filter((code) => !(code in ERROR_CATALOGUE))).toEqual([]);
  });

  it('notices a code missing from the table and a status that differs', () => {
    const full = Object.entries(ERROR_CATALOGUE).map(([code, e]) => `| \`${code}\` | ${e.status} | when |`);
    expect(undocumented(parseErrorTable(full.join('\n')))).toEqual([]);
    const withoutOne = full.filter((row) => !row.includes('`channel_not_found`'));
    expect(undocumented(parseErrorTable(withoutOne.join('\n')))).toEqual(['channel_not_found: missing from docs/api.md\'s error table']);
    const wrongStatus = full.map((row) => row.replace('| `invalid_json` | 400 |', '| `invalid_json` | 422 |'));
    expect(undocumented(parseErrorTable(wrongStatus.join('\n')))).toEqual(['invalid_json: docs/api.md says 422, the catalogue 400']);
  });

  it('does not take rows of other tables (key | variable | default) for error codes', () => {
    const table = parseErrorTable('| `dataDir` | `POSTRIDER_DATA_DIR` | `./data` |\n| `http.port` | 8080 |\n| `forbidden` | 403 | x |');
    expect([...table.entries()]).toEqual([['forbidden', 403]]);
  });
});

describe('ERROR_CATALOGUE', () => {
  it('has every code of the specification\'s section 7 with the status DESIGN.md pairs it with', () => {
    for (const [code, status] of Object.entries(SPEC_CODES)) {
      expect(ERROR_CATALOGUE, code).toHaveProperty(code);
      expect(ERROR_CATALOGUE[code as ErrorCode].status, code).toBe(status);
    }
  });

  it('uses snake_case codes, client or server error statuses and non-empty titles', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.status, code).toBeLessThan(600);
      expect(entry.title.length, code).toBeGreaterThan(0);
    }
  });

  it('gives every code an SMTP failure reply whose enhanced status class matches the reply code (RFC 3463)', () => {
    for (const [code, { smtp }] of Object.entries(ERROR_CATALOGUE)) {
      expect(smtp.code, code).toBeGreaterThanOrEqual(400);
      expect(smtp.code, code).toBeLessThan(600);
      expect(smtp.enhanced, code).toMatch(/^[45]\.\d{1,3}\.\d{1,3}$/);
      expect(smtp.enhanced[0], code).toBe(String(smtp.code)[0]);
    }
  });

  it('has the statuses the HTTP layer relies on for credentials, permissions, limits and faults', () => {
    expect(ERROR_CATALOGUE.unauthorized.status).toBe(401);
    expect(ERROR_CATALOGUE.forbidden.status).toBe(403);
    expect(ERROR_CATALOGUE.not_found.status).toBe(404);
    expect(ERROR_CATALOGUE.payload_too_large.status).toBe(413);
    expect(ERROR_CATALOGUE.unsupported_media_type.status).toBe(415);
    expect(ERROR_CATALOGUE.rate_limit_exceeded.status).toBe(429);
    expect(ERROR_CATALOGUE.internal_error.status).toBe(500);
  });
});

describe('AppError', () => {
  it('takes its status from the catalogue and its message from the title when no detail is given', () => {
    const err = new AppError('channel_not_found');
    expect(err.status).toBe(404);
    expect(err.code).toBe('channel_not_found');
    expect(err.message).toBe(ERROR_CATALOGUE.channel_not_found.title);
    expect(new AppError('channel_not_found', 'Channel x does not exist').message).toBe('Channel x does not exist');
  });

  it('carries field errors, extra headers and its cause', () => {
    const cause = new Error('disk');
    const err = new AppError('rate_limit_exceeded', 'slow down', { headers: { 'retry-after': '3' }, cause, errors: { '/a': [{ code: 'x', message: 'y' }] } });
    expect(err.headers).toEqual({ 'retry-after': '3' });
    expect(err.cause).toBe(cause);
    expect(err.errors).toEqual({ '/a': [{ code: 'x', message: 'y' }] });
  });
});

describe('FieldErrorList', () => {
  it('collects every field error, several per pointer, and throws them together as validation_failed', () => {
    const list = new FieldErrorList();
    list.add('/to/0/email', 'invalid_format', 'is not an address');
    list.add('/subject', 'max_length', 'must be at most 256 characters');
    list.add('/to/0/email', 'max_length', 'must be at most 254 characters');
    expect(list.size).toBe(2);
    let thrown: unknown;
    try {
      list.throwIfAny('bad fields');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe('validation_failed');
    expect((thrown as AppError).message).toBe('bad fields');
    expect((thrown as AppError).errors).toEqual({
      '/to/0/email': [
        { code: 'invalid_format', message: 'is not an address' },
        { code: 'max_length', message: 'must be at most 254 characters' },
      ],
      '/subject': [{ code: 'max_length', message: 'must be at most 256 characters' }],
    });
  });

  it('does not throw when nothing was collected', () => {
    expect(() => new FieldErrorList().throwIfAny()).not.toThrow();
  });
});

describe('pointerSegment', () => {
  it('escapes ~ and / as RFC 6901 requires', () => {
    expect(pointerSegment('a/b~c')).toBe('a~1b~0c');
    expect(pointerSegment(3)).toBe('3');
  });
});
