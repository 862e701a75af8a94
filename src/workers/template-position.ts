/**
 * Where in a template source a Handlebars error is, as a line and a column counted from 1, so an
 * editor can point at it. Handlebars' compiler errors (an unmatched block: `if doesn't match
 * each - 2:3`) carry `lineNumber` and a 0-based `column`; its runtime errors (`Missing helper`)
 * `lineNumber` only; a parse error only says `Parse error on line N:` and shows the input around
 * the offending token with a caret under it, the text before the caret being the last 20
 * characters read with line breaks dropped (Jison's showPosition). That text is found again in
 * line N to give the column.
 */
export interface TemplatePosition {
  line: number;
  column?: number;
}

export function templatePosition(err: unknown, source: string): TemplatePosition | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as Error & { lineNumber?: unknown; column?: unknown };
  if (typeof e.lineNumber === 'number' && e.lineNumber >= 1) {
    return typeof e.column === 'number' ? { line: e.lineNumber, column: e.column + 1 } : { line: e.lineNumber };
  }
  const parse = /^Parse error on line (\d+):\n(.*)\n(-*)\^/.exec(e.message);
  if (!parse) return undefined;
  const line = Number(parse[1]);
  const before = parse[2].slice(0, parse[3].length).replace(/^\.\.\./, '');
  const column = columnAfter(source, line, before);
  return column === undefined ? { line } : { line, column };
}

/** The first column of `line` where the source read so far, without line breaks, ends with `before`. */
function columnAfter(source: string, line: number, before: string): number | undefined {
  const lines = source.split(/\r\n|\r|\n/);
  if (line > lines.length) return undefined;
  const earlier = lines.slice(0, line - 1).join('');
  const text = lines[line - 1];
  for (let c = 0; c <= text.length; c++) {
    if ((earlier + text.slice(0, c)).endsWith(before)) return c + 1;
  }
  return undefined;
}
