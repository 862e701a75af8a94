/**
 * Renders the subject, html and text parts of a message template with Handlebars.
 *
 * `{{var}}` is HTML-escaped and `{{{var}}}` is inserted raw, in the html part only: the
 * subject and the text part are not HTML, so escaping there would put `&amp;` into what the
 * recipient reads. Templates compile in a private Handlebars environment (`Handlebars.create()`)
 * in which nothing registers helpers or partials, so none registered elsewhere can leak into a
 * template, and prototype access stays denied, so template data cannot reach `constructor`,
 * `__proto__` and the like.
 *
 * Compiled templates are remembered per worker thread (one TemplateRenderer each): a broadcast
 * renders the same three sources for every entry, and compiling them again each time cost as
 * much as the RSA signature (bench/RESULTS.md, broadcast section).
 */
import { createRequire } from 'node:module';
import Handlebars from 'handlebars';
import { LRUCache } from 'lru-cache';
import { TaskError } from './errors.js';
import { RenderBudget, type RenderLimits } from './render-budget.js';
import { nestingError } from './template-nesting.js';
import { templatePosition } from './template-position.js';

export interface RenderInput {
  subject?: string;
  html?: string;
  text?: string;
  /** Move the rules of <style> elements into style attributes (many mail clients drop <style>). */
  inlineStyles?: boolean;
  data: Record<string, unknown>;
  /**
   * false: compile without remembering (an unsaved draft the dashboard previews, POST
   * /templates/render): each keystroke is a new source, which would push the templates sends
   * reuse out of the cache and hold up to templates.maxBytes each for an hour.
   */
  cache?: boolean;
  /**
   * Check each part first as the intake does (TemplateChecker: unknown helpers, partials, with
   * their place), on the worker thread: content that was never checked on the main thread (a
   * draft, whose check of a 500 KB part took 1.4 s there; WorkerTasks.render).
   */
  check?: boolean;
  /** Check only (with `check`), render nothing: the intake's check of a large part (submission/template-check.ts). */
  checkOnly?: boolean;
}

export interface RenderOutput {
  subject?: string;
  html?: string;
  text?: string;
}

type Part = 'subject' | 'html' | 'text';

// Explicit rather than relying on the defaults of Handlebars 4.6+, so a future default change
// cannot silently open prototype access.
const RUNTIME_OPTIONS: Handlebars.RuntimeOptions = {
  allowProtoPropertiesByDefault: false,
  allowProtoMethodsByDefault: false,
};

type Compiled = ReturnType<typeof Handlebars.compile>;

export interface TemplateRendererOptions {
  /** Compiled templates kept. */
  max?: number;
  /**
   * Milliseconds a template stays unused before it is dropped: a finished broadcast's templates
   * are not asked for again and need not wait until the cache is full.
   */
  ttl?: number;
  /** What one part may cost (RenderBudget); default: MAX_ITERATIONS iterations, no bound on characters. */
  limits?: Partial<RenderLimits>;
}

/**
 * `{{#each}}` iterations of one part, nested ones included: about a second of a thread. Far more
 * than a message shows (a thousand order lines of a hundred variants each is a tenth of it).
 */
export const MAX_ITERATIONS = 1_000_000;

export class TemplateRenderer {
  private readonly hb = Handlebars.create();
  /** Keyed by escaping mode and source. */
  private readonly compiled: LRUCache<string, Compiled>;
  private readonly budget: RenderBudget;
  /** Templates compiled (for tests and benchmarks). */
  misses = 0;

  constructor(opts: TemplateRendererOptions = {}) {
    this.compiled = new LRUCache({ max: opts.max ?? 200, ttl: opts.ttl ?? 60 * 60_000, updateAgeOnGet: true });
    this.budget = new RenderBudget({ maxIterations: MAX_ITERATIONS, ...opts.limits });
    this.budget.bind(this.hb);
    // Handlebars' log helper writes its arguments to the console: the daemon's stdout, where the
    // worker threads' console goes. `{{#each rows}}{{log this}}{{/each}}` let any key write lines
    // of its choosing (forged JSON log records) between the daemon's own, a million per render.
    this.hb.registerHelper('log', () => undefined);
  }

  render(input: RenderInput): RenderOutput {
    const out: RenderOutput = {};

    if (input.subject !== undefined) {
      // A subject is one header field: a CR or LF from template data would end it and start a
      // header of the data's choosing (RFC 5322 2.2: a field body must not contain CR or LF).
      out.subject = headerSafe(this.renderPart('subject', input.subject, input.data, true, input.cache));
    }
    if (input.html !== undefined) {
      const html = this.renderPart('html', input.html, input.data, false, input.cache);
      out.html = input.inlineStyles ? inlineCss(html) : html;
    }
    if (input.text !== undefined) {
      out.text = this.renderPart('text', input.text, input.data, true, input.cache);
    }
    return out;
  }

  private renderPart(field: Part, source: string, data: Record<string, unknown>, noEscape: boolean, cache = true): string {
    // Handlebars compiles lazily: a syntax error surfaces on the first call of the template, so
    // compile and call are guarded together (a template that does not compile throws on every
    // call, cached or not).
    try {
      this.budget.start();
      return this.template(source, noEscape, cache)(data, RUNTIME_OPTIONS);
    } catch (err) {
      throw templatingError(field, source, err);
    }
  }

  private template(source: string, noEscape: boolean, cache: boolean): Compiled {
    const key = `${noEscape ? 't' : 'h'}:${source}`;
    const found = this.compiled.get(key);
    if (found) return found;
    this.misses++;
    // Refused before Handlebars parses it: its parser's cost grows faster than the nesting's square.
    const tooDeep = nestingError(source);
    if (tooDeep) throw tooDeep;
    const template = this.hb.compile(source, { strict: false, noEscape });
    if (cache) this.compiled.set(key, template);
    return template;
  }
}

/** The helpers of a Handlebars.create() environment (nothing registers more), by the parameters each requires. */
const BUILTIN_HELPERS: Record<string, (params: number) => string | undefined> = {
  if: (n) => (n === 1 ? undefined : '#if requires exactly one argument'),
  unless: (n) => (n === 1 ? undefined : '#unless requires exactly one argument'),
  with: (n) => (n === 1 ? undefined : '#with requires exactly one argument'),
  each: (n) => (n >= 1 ? undefined : 'Must pass iterator to #each'),
  // lookup(obj, field, options): without both arguments it reads options off something else and throws.
  lookup: (n) => (n === 2 ? undefined : 'lookup requires two arguments: {{lookup object key}}'),
  log: () => undefined,
  // Handlebars' fallbacks for a missing helper, in every environment: called by name they throw.
  helperMissing: () => 'helperMissing is not a helper a template may call',
  blockHelperMissing: () => 'blockHelperMissing is not a helper a template may call',
};

/** The built-in helpers that only work with a block: `{{if x}}` fails on its missing options.fn. */
const BLOCK_ONLY = new Set(['if', 'unless', 'with', 'each']);

/**
 * Characters the loops of a template's subject may render at intake, on the main thread: as many
 * as its source may have (send-schemas.ts), far above the 256 it may render to in all.
 */
export const SUBJECT_MAX_CHARS = 2048;

type HbNode = { type: string; path?: { type: string; original?: unknown; parts?: unknown[]; data?: boolean; depth?: number }; params?: unknown[]; hash?: { pairs?: unknown[] } };

/**
 * The intake's check that template parts compile (submission/template-check.ts): on the main
 * thread (a large part seen for the first time on a worker thread first), before the commit, while rendering happens after it (the finishing stage). Compiling
 * is done once per source (cached, failures too); besides the syntax it refuses what fails on
 * every render whatever the data, as rendering would: a helper that does not exist (every call
 * with parameters or a hash names a helper: data is JSON and holds no functions), a built-in
 * helper with the wrong number of parameters, a partial or a decorator (none is registered).
 */
export class TemplateChecker {
  private readonly hb = Handlebars.create();
  /** Keyed by escaping mode and source: the error (its message for the static check), or '' when it compiles. */
  private readonly checked = new LRUCache<string, Error | string>({ max: 500, ttl: 60 * 60_000, updateAgeOnGet: true });
  /**
   * Renders subjects at intake, on the main thread: the record and events carry them. Bounded,
   * loops included: nested {{#each}} over a send's data stalled the daemon (RenderBudget).
   */
  private readonly renderer = new TemplateRenderer({ limits: { maxChars: SUBJECT_MAX_CHARS } });
  /** Parts compiled to check them (for tests and benchmarks); the subjects' renderer counts its own. */
  misses = 0;

  /** Subjects compiled by the intake's renderer (for tests and benchmarks). */
  get subjectMisses(): number {
    return this.renderer.misses;
  }

  /**
   * Throws templating_error (field: the part, with the line and column when known) when the part
   * cannot render. `cache` false: the verdict is not remembered (a draft: see RenderInput.cache).
   */
  check(field: Part, source: string, noEscape: boolean, cache = true): void {
    const key = `${noEscape ? 't' : 'h'}:${source}`;
    let reason = this.checked.get(key);
    if (reason === undefined) {
      this.misses++;
      reason = this.compileError(source, noEscape) ?? '';
      if (cache) this.checked.set(key, reason);
    }
    if (reason) throw templatingError(field, source, reason);
  }

  /** Whether a verdict on this source is remembered (check() would not compile it). */
  known(source: string, noEscape: boolean): boolean {
    return this.checked.has(`${noEscape ? 't' : 'h'}:${source}`);
  }

  /** Remembers that this source compiles: a worker thread checked it (submission/template-check.ts). */
  remember(source: string, noEscape: boolean): void {
    this.checked.set(`${noEscape ? 't' : 'h'}:${source}`, '');
  }

  /** The subject part rendered (already checked by render itself). */
  renderSubject(source: string, data: Record<string, unknown>): string {
    return this.renderer.render({ subject: source, data }).subject ?? '';
  }

  private compileError(source: string, noEscape: boolean): Error | string | undefined {
    const tooDeep = nestingError(source);
    if (tooDeep) return tooDeep;
    try {
      // Parsed once: precompile takes the tree (a syntax error is thrown by parse, as it was by
      // precompile), and the static check reads the tree before the compiler walks it.
      const ast = this.hb.parse(source);
      const staticReason = staticError(ast as unknown as HbNode);
      this.hb.precompile(ast, { strict: false, noEscape });
      return staticReason;
    } catch (err) {
      return err instanceof Error ? err : String(err);
    }
  }
}

/** The first call in the template that fails on every render (see TemplateChecker), depth first, with its place. */
function staticError(node: unknown): Error | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  if (Array.isArray(node)) {
    for (const n of node) {
      const e = staticError(n);
      if (e) return e;
    }
    return undefined;
  }
  const n = node as HbNode;
  const own = callError(n);
  if (own) return placed(own, n);
  for (const [k, v] of Object.entries(n)) {
    if (k !== 'loc' && v && typeof v === 'object') {
      const e = staticError(v);
      if (e) return e;
    }
  }
  return undefined;
}

/** An error with the node's place, as Handlebars' own compiler errors carry it (lineNumber, 0-based column). */
function placed(message: string, n: HbNode): Error {
  const err = new Error(message) as Error & { lineNumber?: number; column?: number };
  const start = (n as { loc?: { start?: { line?: number; column?: number } } }).loc?.start;
  if (start?.line !== undefined) err.lineNumber = start.line;
  if (start?.column !== undefined) err.column = start.column;
  return err;
}

function callError(n: HbNode): string | undefined {
  if (/^(Partial|PartialBlock|Decorator|DecoratorBlock)Statement$|^DecoratorBlock$/.test(n.type)) return `${n.type} is not supported`;
  if (!/^(MustacheStatement|BlockStatement|SubExpression)$/.test(n.type) || !n.path) return undefined;
  const params = n.params?.length ?? 0;
  const hash = n.hash?.pairs?.length ?? 0;
  const simple = n.path.type === 'PathExpression' && !n.path.data && n.path.depth === 0 && n.path.parts?.length === 1;
  const name = simple ? String(n.path.original) : undefined;
  const builtin = name !== undefined && Object.hasOwn(BUILTIN_HELPERS, name) ? BUILTIN_HELPERS[name] : undefined;
  if (builtin && BLOCK_ONLY.has(name!) && n.type !== 'BlockStatement') return `${name} needs a block: {{#${name} ...}}`;
  if (builtin) return builtin(params);
  if (params + hash > 0) return `Missing helper: "${String(n.path.original)}"`;
  return undefined;
}

/** A part's templating_error, with where in the source it is when Handlebars says. */
function templatingError(field: Part, source: string, err: unknown): TaskError {
  const reason = err instanceof Error ? err.message : String(err);
  const e = new TaskError('templating_error', `The ${field} template could not be rendered: ${reason}`, field, { cause: err });
  const at = templatePosition(err, source);
  if (at) {
    e.line = at.line;
    if (at.column !== undefined) e.column = at.column;
  }
  return e;
}

/** Replaces every line break (CRLF, CR or LF) by a space. */
export function headerSafe(value: string): string {
  return value.replace(/\r\n|\r|\n/g, ' ');
}

/**
 * juice (and cheerio under it, about a quarter of a second of module loading) is required on
 * first use: only a worker thread inlines styles, while the main thread loads this module for
 * TemplateChecker, and every start of the daemon paid for it (issue 36: a start timed out in CI).
 */
const requireHere = createRequire(import.meta.url);

function inlineCss(html: string): string {
  try {
    const juice = requireHere('juice') as typeof import('juice');
    return juice(html);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new TaskError('templating_error', `The styles of the html template could not be inlined: ${reason}`, 'html', { cause: err });
  }
}
