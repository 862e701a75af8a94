/**
 * A send's template at intake, on the main thread and before the commit: its parts must compile
 * (templating_error 422 on /template/<part>, as when rendering failed before the commit), and its
 * subject is rendered now, because the message record and its `accepted` and `processed` events
 * carry the subject from the commit on. The html and text parts are rendered after the commit by
 * the finishing stage (finishing.ts), with the same data: compiling is cached per source in
 * workers/render.ts (TemplateChecker), so a template sent again costs two map look-ups.
 */
import type { TemplateInput } from '../domain/send-rules.js';
import { engagementUrls, type EngagementInput } from '../workers/engagement.js';
import { TemplateChecker } from '../workers/render.js';
import { toAppError } from './task-errors.js';

const checker = new TemplateChecker();

/** Checks the parts of a template and returns its rendered subject; throws templating_error (422). */
export function checkTemplate(template: TemplateInput & { data: Record<string, unknown> }, engagement: EngagementInput | undefined): string {
  try {
    if (template.html !== undefined) checker.check('html', template.html, false);
    if (template.text !== undefined) checker.check('text', template.text, true);
    if (template.subject === undefined) return '';
    // The data the worker renders the other parts with: `{{{unsubscribe}}}` is ours (tasks.ts).
    const unsubscribe = engagement ? engagementUrls(engagement).unsubscribeUrl : undefined;
    return checker.renderSubject(template.subject, unsubscribe ? { ...template.data, unsubscribe } : template.data);
  } catch (err) {
    // The same problem builder.ts makes of a render that failed in the worker pool.
    throw toAppError(err, '/template');
  }
}
