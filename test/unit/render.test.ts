import { describe, expect, it, vi } from 'vitest';
import { TaskError } from '../../src/workers/errors.js';
import { MAX_ITERATIONS, TemplateChecker, TemplateRenderer, type RenderInput } from '../../src/workers/render.js';
import { MAX_NESTING } from '../../src/workers/template-nesting.js';

// One renderer for the file, as one worker thread has one: its template cache spans the tests.
const renderer = new TemplateRenderer();
const renderTemplate = (input: RenderInput) => renderer.render(input);

function renderError(fn: () => unknown): TaskError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TaskError);
    return err as TaskError;
  }
  throw new Error('expected a TaskError');
}

describe('renderTemplate', () => {
  it('escapes {{var}} and inserts {{{var}}} raw in the html part', () => {
    const out = renderTemplate({ html: '<p>{{a}}</p><div>{{{a}}}</div>', data: { a: '<b>"x" & y</b>' } });
    expect(out.html).toBe('<p>&lt;b&gt;&quot;x&quot; &amp; y&lt;/b&gt;</p><div><b>"x" & y</b></div>');
  });

  it('stops a render whose loops, nested over the data, pass MAX_ITERATIONS, with a templating_error of the part', () => {
    const range = (n: number) => Array.from({ length: n }, (_, i) => i);
    const nested = '{{#each a}}{{#each @root.a}}{{#each @root.a}}{{#each @root.a}}{{/each}}{{/each}}{{/each}}{{/each}}';
    // 40^4 iterations that render nothing: 2.6 million, seconds of a worker thread, hours with a few hundred items.
    const e = renderError(() => renderTemplate({ text: nested, data: { a: range(40) } }));
    expect(e.code).toBe('templating_error');
    expect(e.field).toBe('text');
    expect(e.message).toContain(`more than ${MAX_ITERATIONS} times`);
    // A section over an array loops through {{#each}} too.
    expect(renderError(() => renderTemplate({ html: '{{#a}}{{#../a}}{{#../../a}}{{#../../../a}}{{/../../../a}}{{/../../a}}{{/../a}}{{/a}}', data: { a: range(40) } })).code).toBe('templating_error');
    // Under the bound a render is what it was, and the next render has the whole budget again.
    expect(renderTemplate({ text: '{{#each a}}{{#each @root.a}}.{{/each}}{{/each}}', data: { a: range(900) } }).text).toHaveLength(900 ** 2);
    expect(renderTemplate({ text: '{{#each a}}{{this}}{{/each}}', data: { a: range(3) } }).text).toBe('012');
  });

  it('does not html-escape the subject and the text part', () => {
    const out = renderTemplate({ subject: 'Tom & {{who}}', text: 'Hi {{who}} <3', data: { who: 'Jerry & "Co"' } });
    expect(out.subject).toBe('Tom & Jerry & "Co"');
    expect(out.text).toBe('Hi Jerry & "Co" <3');
  });

  it('renders nested data, loops and conditionals', () => {
    const out = renderTemplate({
      text: '{{user.name}}:{{#each items}} {{this}}{{/each}}{{#if vip}} VIP{{/if}}',
      data: { user: { name: 'Ann' }, items: ['a', 'b'], vip: true },
    });
    expect(out.text).toBe('Ann: a b VIP');
  });

  it('renders a missing variable as an empty string', () => {
    const out = renderTemplate({ subject: 'Hello {{name}}!', html: '<p>{{missing.deep}}</p>', data: {} });
    expect(out.subject).toBe('Hello !');
    expect(out.html).toBe('<p></p>');
  });

  it('returns only the parts that were given', () => {
    expect(renderTemplate({ text: 'x', data: {} })).toEqual({ text: 'x' });
  });

  it('denies access to prototype properties of the data', () => {
    const out = renderTemplate({ text: '[{{constructor}}][{{__proto__}}][{{toString}}]', data: {} });
    expect(out.text).toBe('[][][]');
  });

  it('reports a syntax error as templating_error naming the failed part', () => {
    for (const field of ['subject', 'html', 'text'] as const) {
      const input = { subject: 'ok', html: '<p>ok</p>', text: 'ok', data: {}, [field]: 'broken {{#if x}} never closed' };
      const err = renderError(() => renderTemplate(input));
      expect(err.code).toBe('templating_error');
      expect(err.field).toBe(field);
      expect(err.message).toContain(field);
    }
  });

  it('reports a runtime error (unknown helper with arguments) as templating_error', () => {
    const err = renderError(() => renderTemplate({ html: '{{nohelper 1 2}}', data: {} }));
    expect(err.code).toBe('templating_error');
    expect(err.field).toBe('html');
  });

  it('refuses a part nested deeper than MAX_NESTING before Handlebars parses it, with its place, and takes MAX_NESTING', () => {
    // Handlebars' parser costs more than the square of the nesting: 25,000 nested blocks (480 KB)
    // held a worker thread for minutes, and ended in a stack overflow.
    const blocks = (n: number) => `${'{{#if a}}'.repeat(n)}y${'{{/if}}'.repeat(n)}`;
    const chain = (n: number) => `{{#if a}}x${'{{ else if a}}x'.repeat(n - 1)}{{/if}}`;
    const subexpressions = (n: number) => `{{lookup ${'(lookup '.repeat(n)}a${' b)'.repeat(n)} c}}`;
    const mixed = (n: number) => `{{#each a}}{{#with b}}{{#if c}}{{else if d}}${subexpressions(n - 4)}{{/if}}{{/with}}{{/each}}`;
    const checker = new TemplateChecker();
    for (const deep of [blocks, chain, subexpressions, mixed]) {
      const source = `line one\nab${deep(MAX_NESTING + 1)}`;
      for (const fail of [() => renderTemplate({ text: source, data: {} }), () => checker.check('text', source, true)]) {
        const err = renderError(fail);
        expect(err.code).toBe('templating_error');
        expect(err.message).toContain(`nested at most ${MAX_NESTING} deep`);
        expect(err.line).toBe(2);
        expect(err.column).toBeGreaterThan(2);
      }
      checker.check('text', deep(MAX_NESTING), true);
      expect(() => renderTemplate({ text: deep(MAX_NESTING), data: { a: [1], b: 1, c: 1 } })).not.toThrow();
    }
    // Blocks that close do not add up; a bare else, {{^}} and a triple-stash are no blocks.
    const siblings = '{{#if a}}x{{else}}y{{/if}}{{#if a}}x{{^}}y{{/if}}{{^b}}z{{/b}}{{{c}}}'.repeat(MAX_NESTING * 2);
    checker.check('html', siblings, false);
    // The deep template of the report is refused at once (it took minutes before).
    expect(renderError(() => checker.check('text', blocks(25_000), true)).message).toContain('nested at most');
  });

  it('checks what fails on every render whatever the data: lookup without its two arguments, Handlebars\' helperMissing called by name', () => {
    // A data field named like them ({"lookup": ...}) renders nothing but the error: the check must
    // refuse the send (422) rather than let it be accepted and bounced as not composable.
    const checker = new TemplateChecker();
    for (const source of ['{{lookup}}', '{{lookup a}}', '{{#lookup a b c}}x{{/lookup}}', '{{helperMissing}}', '{{#blockHelperMissing}}x{{/blockHelperMissing}}', '{{x (lookup)}}']) {
      const data = { lookup: 'L', helperMissing: 'H', blockHelperMissing: 'B', a: { b: 1 }, b: 'b', c: 'c' };
      if (!source.startsWith('{{x')) expect(renderError(() => renderTemplate({ text: source, data })).code).toBe('templating_error');
      const err = renderError(() => checker.check('text', source, true));
      expect(err.code).toBe('templating_error');
      expect(err.line).toBe(1);
    }
    checker.check('text', '{{lookup a "b"}} {{#each a}}{{lookup ../a @key}}{{/each}} {{log a}} {{log}}', true);
    expect(renderTemplate({ text: '{{lookup a "b"}}', data: { a: { b: 7 } } }).text).toBe('7');
  });

  it('writes nothing of a template or its data to the console: {{log}} renders nothing and logs nothing', () => {
    const methods = ['log', 'debug', 'info', 'warn', 'error'] as const;
    const spies = methods.map((m) => vi.spyOn(console, m).mockImplementation(() => undefined));
    try {
      const data = { rows: ['{"level":60,"msg":"forged"}', 'two'] };
      const out = renderTemplate({ subject: '{{log "s"}}ok', text: '{{#each rows}}{{log this}}{{log this level="error"}}{{/each}}{{log}}', data });
      expect(out).toEqual({ subject: 'ok', text: '' });
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('does not share helpers between calls or with the global Handlebars environment', async () => {
    const { default: Handlebars } = await import('handlebars');
    Handlebars.registerHelper('leaky', () => 'LEAK');
    try {
      const err = renderError(() => renderTemplate({ text: '{{leaky 1}}', data: {} }));
      expect(err.code).toBe('templating_error');
    } finally {
      Handlebars.unregisterHelper('leaky');
    }
  });

  it('compiles a source once per thread and renders it with each call\'s own data', () => {
    const source = `<p>Order {{order}} for {{name}} ${Math.random()}</p>`;
    const before = renderer.misses;
    expect(renderTemplate({ html: source, data: { order: 1, name: '<Ann>' } }).html).toContain('Order 1 for &lt;Ann&gt;');
    expect(renderTemplate({ html: source, data: { order: 2, name: 'Bob' } }).html).toContain('Order 2 for Bob');
    // The same source as text is another template (no escaping): compiled separately.
    expect(renderTemplate({ text: source, data: { order: 3, name: '<Cy>' } }).text).toContain('Order 3 for <Cy>');
    expect(renderer.misses - before).toBe(2);
    // A template that does not compile fails every time, not only the first.
    for (let i = 0; i < 2; i++) expect(renderError(() => renderTemplate({ html: '{{#each}}', data: {} })).code).toBe('templating_error');
  });

  it('compiles a draft (cache: false) on every call and keeps it out of the cache, as the checker does', () => {
    const source = `<p>Draft {{name}} ${Math.random()}</p>`;
    const before = renderer.misses;
    for (let i = 0; i < 2; i++) expect(renderTemplate({ html: source, data: { name: 'Ann' }, cache: false }).html).toContain('Draft Ann');
    expect(renderer.misses - before).toBe(2);
    // Not remembered: the same source sent afterwards compiles once more, and is remembered then.
    renderTemplate({ html: source, data: {} });
    renderTemplate({ html: source, data: {} });
    expect(renderer.misses - before).toBe(3);
    const checker = new TemplateChecker();
    for (let i = 0; i < 2; i++) expect(renderError(() => checker.check('html', '{{#if}}x', false, false)).code).toBe('templating_error');
    checker.check('html', source, false, false);
    checker.check('html', source, false, false);
    expect(checker.misses).toBe(4);
  });

  it('moves a <style> rule into a style attribute when inlineStyles is set', () => {
    const html = '<html><head><style>p.note { color: red; }</style></head><body><p class="note">{{msg}}</p></body></html>';
    const inlined = renderTemplate({ html, inlineStyles: true, data: { msg: 'hi' } }).html ?? '';
    expect(inlined).toMatch(/<p class="note" style="color: red;">hi<\/p>/);
    expect(inlined).not.toContain('<style>');
    const plain = renderTemplate({ html, data: { msg: 'hi' } }).html ?? '';
    expect(plain).toContain('<style>');
    expect(plain).not.toContain('style="');
  });

  it('replaces CR and LF coming from data in the subject with spaces', () => {
    const out = renderTemplate({ subject: 'Hi {{name}}', text: '{{name}}', data: { name: 'Eve\r\nBcc: victim@example.com\nX\rY' } });
    expect(out.subject).toBe('Hi Eve Bcc: victim@example.com X Y');
    expect(out.subject).not.toMatch(/[\r\n]/);
    // The text body keeps its line breaks.
    expect(out.text).toBe('Eve\r\nBcc: victim@example.com\nX\rY');
  });
});
