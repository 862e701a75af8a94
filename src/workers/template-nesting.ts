/**
 * How deep a template nests, read from its source before Handlebars parses it. Handlebars' parser
 * costs more than the square of the nesting: blocks (`{{#if}}` in `{{#if}}` ...), `{{else if}}`
 * chains (each link is a block in the one before) and subexpressions (`(lookup (lookup ...))`)
 * nested 6,000 deep took 10 s to end in "Maximum call stack size exceeded", 25,000 (480 KB, under
 * templates.maxBytes) took minutes of a worker thread, from one request of any key (a send, a
 * draft's render). Mail templates nest a few levels; beyond MAX_NESTING the part is refused at
 * once, a templating_error with its place, as a syntax error is.
 *
 * The scan is linear and approximate on purpose: it reads every `{{`, as Handlebars' lexer does
 * outside comments and raw blocks (what looks like a block inside those counts too), and never
 * refuses a template Handlebars would take unless it nests that deep.
 */

/** Blocks, `else` links and subexpressions open at one place of a template, at most. */
export const MAX_NESTING = 200;

/** The error of a part nested deeper than MAX_NESTING (with lineNumber and 0-based column, as Handlebars' own), or undefined. */
export function nestingError(source: string): Error | undefined {
  // One entry per open block: 1, plus one per `{{else x}}` link of its chain.
  const blocks: number[] = [];
  let open = 0;
  for (let at = source.indexOf('{{'); at !== -1; at = source.indexOf('{{', at + 2)) {
    const tag = mustacheAt(source, at);
    if (tag.kind === 'close') open -= blocks.pop() ?? 0;
    else if (tag.kind === 'open') blocks.push(1);
    else if (tag.kind === 'chain' && blocks.length > 0) blocks[blocks.length - 1]++;
    if (tag.kind === 'open' || tag.kind === 'chain') open++;
    const deepest = open + subexpressionDepth(source, tag.bodyStart, tag.end);
    if (deepest > MAX_NESTING) return placedAt(source, at);
    at = Math.max(at, tag.end - 2);
  }
  return undefined;
}

interface Mustache {
  kind: 'open' | 'close' | 'chain' | 'other';
  /** Where the tag's content starts (after the braces, `~` and its sigil). */
  bodyStart: number;
  /** Where the tag's closing braces start (the source's end when it has none). */
  end: number;
}

function mustacheAt(source: string, at: number): Mustache {
  let i = at + 2;
  const raw = source.startsWith('{{', i);
  while (source[i] === '{') i++;
  if (source[i] === '~') i++;
  const close = source.indexOf('}}', i);
  const end = close === -1 ? source.length : close;
  const sigil = source[i];
  const body = source.slice(i + 1, Math.min(end, i + 16)).trim();
  let kind: Mustache['kind'] = 'other';
  if (sigil === '/') kind = 'close';
  else if (raw || sigil === '#') kind = 'open';
  else if (sigil === '^') kind = body === '' || body === '~' ? 'other' : 'open';
  else if (/^\s*else\s+[^\s~}]/.test(source.slice(i, Math.min(end, i + 16)))) kind = 'chain';
  return { kind, bodyStart: i, end };
}

/** The deepest nesting of parentheses in source[from, to). */
function subexpressionDepth(source: string, from: number, to: number): number {
  let depth = 0;
  let deepest = 0;
  for (let i = from; i < to; i++) {
    const c = source.charCodeAt(i);
    if (c === 40) deepest = Math.max(deepest, ++depth);
    else if (c === 41 && depth > 0) depth--;
  }
  return deepest;
}

function placedAt(source: string, at: number): Error {
  const err = new Error(`blocks, else-if chains and subexpressions may be nested at most ${MAX_NESTING} deep`) as Error & { lineNumber?: number; column?: number };
  const lineStart = source.lastIndexOf('\n', at - 1) + 1;
  let line = 1;
  for (let i = source.indexOf('\n'); i !== -1 && i < at; i = source.indexOf('\n', i + 1)) line++;
  err.lineNumber = line;
  err.column = at - lineStart;
  return err;
}
