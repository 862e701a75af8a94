/**
 * A bound on what one render may cost. A template is short, but nested `{{#each}}` over the
 * data multiplies: four levels over 60 items made 13 million iterations. On the main thread (the
 * subject the intake renders, submission/template-check.ts) the daemon answered nothing for 10 s
 * and accepted a 12 MB subject that every event and webhook payload then carried; on a worker
 * thread (composition, POST /templates/render) two such renders held every thread, so no message
 * was composed meanwhile, for as long as the loops ran (hours, with a few hundred items).
 *
 * Every iteration of `{{#each}}` (a section over an array goes through it too) counts, with the
 * characters it rendered, so a render stops with an error as soon as a limit is passed, however
 * deep the nesting and even when the iterations render nothing. What a render gives without a
 * loop costs no more than its data's size; its length is the caller's rule (a subject's 256
 * characters: domain/send-rules.ts checkRenderedSubject).
 */
import type Handlebars from 'handlebars';

export interface RenderLimits {
  /** `{{#each}}` iterations of one render, nested ones included. */
  maxIterations: number;
  /** Characters the loops of one render may give, each iteration counting its output and one more. */
  maxChars?: number;
}

type HelperOptions = { fn?: (context: unknown, options?: unknown) => string };

export class RenderBudget {
  private iterations = 0;
  private chars = 0;

  constructor(readonly limits: RenderLimits) {}

  /** Before each render. */
  start(): void {
    this.iterations = 0;
    this.chars = 0;
  }

  /** Makes the environment's `{{#each}}` count against this budget (once, before compiling with it). */
  bind(hb: typeof Handlebars): void {
    const each = hb.helpers.each as (...args: unknown[]) => unknown;
    const spend = (out: string): void => this.spend(out);
    hb.registerHelper('each', function (this: unknown, ...args: unknown[]) {
      const options = args[args.length - 1] as HelperOptions | undefined;
      const fn = options?.fn;
      if (options && typeof fn === 'function') {
        options.fn = (context, o) => {
          const out = fn(context, o);
          spend(out);
          return out;
        };
      }
      return each.apply(this, args);
    });
  }

  private spend(out: string): void {
    this.iterations++;
    this.chars += out.length + 1;
    const { maxIterations, maxChars } = this.limits;
    if (this.iterations > maxIterations) throw new Error(`it loops more than ${maxIterations} times ({{#each}}, nested ones included)`);
    if (maxChars !== undefined && this.chars > maxChars) throw new Error(`its loops render more than ${maxChars} characters ({{#each}}, nested ones included)`);
  }
}
