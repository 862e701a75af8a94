/**
 * A send's template at intake, before the commit: its parts must compile (templating_error 422
 * on /template/<part>, as when rendering failed before the commit), and its subject is rendered
 * now, because the message record and its `accepted` and `processed` events carry the subject
 * from the commit on. The html and text parts are rendered after the commit by the finishing
 * stage (finishing.ts), with the same data.
 *
 * Compiling is cached per source (workers/render.ts TemplateChecker), so a template sent again
 * costs two map look-ups. A part seen for the first time is compiled on the main thread only
 * while it is small (MAIN_THREAD_MAX): a 500 KB part took 1.4 s to check there, a stall any API
 * key could cause with a new template per request. A larger one is checked on a worker thread
 * first (prepare(), through the pool), and its verdict is remembered here. The subject is at most
 * 2,048 characters (send-schemas.ts) and a stored version's is as capped, so it is rendered here.
 */
import { FieldErrorList } from '../domain/errors.js';
import { checkRenderedSubject, LIMITS, type TemplateInput } from '../domain/send-rules.js';
import { engagementUrls, type EngagementInput } from '../workers/engagement.js';
import { TemplateChecker } from '../workers/render.js';
import { toAppError } from './task-errors.js';

/** Characters of a part compiled on the main thread when it was never seen: a few ms at most. */
export const MAIN_THREAD_MAX = 4096;

/** Throws validation_failed on /template/subject when a template's subject rendered longer than a subject may be. */
export function assertRenderedSubject(subject: string): void {
  const errors = new FieldErrorList();
  checkRenderedSubject(subject, '/template/subject', errors);
  errors.throwIfAny(`The template's subject renders to more than ${LIMITS.subjectChars} characters`);
}

/** The parts the worker pool checks (MessageBuilder.checkTemplate); throws templating_error on /template/<part>. */
export type OffThreadCheck = (parts: { html?: string; text?: string }) => Promise<void>;

export class IntakeTemplates {
  private readonly checker = new TemplateChecker();

  constructor(private readonly offThread: OffThreadCheck) {}

  /** Parts compiled at intake so far (tests and benchmarks). */
  get misses(): number {
    return this.checker.misses;
  }

  /** Subjects compiled at intake so far (tests and benchmarks). */
  get subjectMisses(): number {
    return this.checker.subjectMisses;
  }

  /**
   * Checks the large parts never seen before on a worker thread, and remembers that they
   * compile; throws templating_error (422) when one does not. Await it before check().
   */
  async prepare(template: Pick<TemplateInput, 'html' | 'text'>): Promise<void> {
    const parts: { html?: string; text?: string } = {};
    if (this.unseenLarge(template.html, false)) parts.html = template.html;
    if (this.unseenLarge(template.text, true)) parts.text = template.text;
    if (parts.html === undefined && parts.text === undefined) return;
    await this.offThread(parts);
    if (parts.html !== undefined) this.checker.remember(parts.html, false);
    if (parts.text !== undefined) this.checker.remember(parts.text, true);
  }

  /**
   * Checks the parts of a template and returns its rendered subject; throws templating_error
   * (422), or validation_failed on /template/subject when the subject renders too long.
   */
  check(template: TemplateInput & { data: Record<string, unknown> }, engagement: EngagementInput | undefined): string {
    const subject = this.rendered(template, engagement);
    assertRenderedSubject(subject);
    return subject;
  }

  private rendered(template: TemplateInput & { data: Record<string, unknown> }, engagement: EngagementInput | undefined): string {
    try {
      if (template.html !== undefined) this.checker.check('html', template.html, false);
      if (template.text !== undefined) this.checker.check('text', template.text, true);
      if (template.subject === undefined) return '';
      // The data the worker renders the other parts with: `{{{unsubscribe}}}` is ours (tasks.ts).
      const unsubscribe = engagement ? engagementUrls(engagement).unsubscribeUrl : undefined;
      return this.checker.renderSubject(template.subject, unsubscribe ? { ...template.data, unsubscribe } : template.data);
    } catch (err) {
      // The same problem builder.ts makes of a render that failed in the worker pool.
      throw toAppError(err, '/template');
    }
  }

  private unseenLarge(source: string | undefined, noEscape: boolean): boolean {
    return source !== undefined && source.length > MAIN_THREAD_MAX && !this.checker.known(source, noEscape);
  }
}
