/**
 * Reads the config file: JSON with // and /* *\/ comments (jsonc-parser), so the file can explain
 * every key. A syntax error is reported with its line, column and offset in the file as written,
 * comments included. Trailing commas stay errors, as in JSON.
 */
import fs from 'node:fs';
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';

/** The file's top-level object, or null after pushing what is wrong to `problems`. */
export function readConfigFile(file: string, problems: string[]): Record<string, unknown> | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    problems.push(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    return null;
  }
  const result = parseJsonc(text);
  if (typeof result === 'string') {
    problems.push(`${file}: not valid JSON (${result})`);
    return null;
  }
  return result;
}

/** The top-level object of a JSON-with-comments text, or a description of the first error. */
export function parseJsonc(text: string): Record<string, unknown> | string {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { disallowComments: false, allowTrailingComma: false, allowEmptyContent: false });
  // The first error is the one at fault; the parser recovers and later errors tend to follow from it.
  if (errors.length > 0) return describeSyntaxError(text, errors[0]);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'top level must be an object';
  return value as Record<string, unknown>;
}

/** "comma expected at line 7, column 5, offset 128"; lines and columns count from 1. */
function describeSyntaxError(text: string, error: ParseError): string {
  const before = text.slice(0, error.offset);
  const line = before.split('\n').length;
  const column = error.offset - (before.lastIndexOf('\n') + 1) + 1;
  const what = printParseErrorCode(error.error)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return `${what} at line ${line}, column ${column}, offset ${error.offset}`;
}
