/**
 * A bound on what one render may produce, for the subjects the intake renders on the main thread
 * (submission/template-check.ts). A subject template is short, but nested `{{#each}}` over the
 * send's data multiplies: four levels over 60 items made 13 million iterations, 10 s in which the
 * daemon answered nothing, and a 12 MB subject that every event and webhook payload then carried.
 *
 * Every iteration of `{{#each}}` (a section over an array goes through it too) spends the
 * characters it rendered and one more, so a render stops with an error as soon as the budget is
 * gone, however deep the nesting and even when the iterations render nothing; the result itself
 * must fit too.
 */
import type Handlebars from 'handlebars';

type HelperOptions = { fn?: (context: unknown, options?: unknown) => string };

export class RenderBudget {
  private left = 0;

  constructor(readonly maxChars: number) {}

  /** Before each render. */
  start(): void {
    this.left = this.maxChars;
  }

  /** After each render: the result must fit as well. */
  check(rendered: string): void {
    if (rendered.length > this.maxChars) throw this.exceeded();
  }

  /** Makes the environment's `{{#each}}` spend from this budget (once, before compiling with it). */
  bind(hb: typeof Handlebars): void {
    const each = hb.helpers.each as (...args: unknown[]) => unknown;
    const spend = (chars: number): void => {
      this.left -= chars;
      if (this.left < 0) throw this.exceeded();
    };
    hb.registerHelper('each', function (this: unknown, ...args: unknown[]) {
      const options = args[args.length - 1] as HelperOptions | undefined;
      const fn = options?.fn;
      if (options && typeof fn === 'function') {
        options.fn = (context, o) => {
          const out = fn(context, o);
          spend(out.length + 1);
          return out;
        };
      }
      return each.apply(this, args);
    });
  }

  private exceeded(): Error {
    return new Error(`it renders to more than ${this.maxChars} characters`);
  }
}
