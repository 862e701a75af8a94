/**
 * Every field error code the daemon can answer is snake_case and named in docs/api.md's list of
 * field error codes, so clients can rely on the list (issue 18).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIELD_CODES_FROM_AJV } from '../../src/http/problem.js';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Codes written in the sources: errors.add(pointer, 'code', ...), { code: 'x', message }, fail('x', ...). */
function codesInSources(): Set<string> {
  const codes = new Set<string>(Object.values(FIELD_CODES_FROM_AJV));
  codes.add('invalid');
  for (const file of sourceFiles('src')) {
    const text = fs.readFileSync(file, 'utf8');
    for (const re of [/\.add\([^,()]+(?:\([^()]*\))?[^,()]*,\s*'([A-Za-z_]+)'/g, /\{ code: '([A-Za-z_]+)', message/g, /\bfail\('([A-Za-z_]+)'/g]) {
      for (const m of text.matchAll(re)) codes.add(m[1]);
    }
  }
  // Not field errors: error catalogue codes passed through the same shapes.
  for (const notField of ['internal_error', 'recipients_suppressed']) codes.delete(notField);
  return codes;
}

describe('field error codes', () => {
  const codes = codesInSources();
  const readme = fs.readFileSync('docs/api.md', 'utf8');
  const listed = readme.slice(readme.indexOf('Field error codes'), readme.indexOf('| code | status | when |'));

  it('are snake_case', () => {
    for (const code of codes) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it('are all listed in docs/api.md', () => {
    expect(codes.size).toBeGreaterThan(20);
    expect([...codes].filter((c) => !listed.includes(`\`${c}\``)).sort()).toEqual([]);
  });
});
