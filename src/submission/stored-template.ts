/**
 * A send that names a stored template (issue 34): `template: {id | alias, version?, data}` is
 * resolved here, before the commit, into the inline template the rest of the pipeline takes
 * (template-check.ts at intake, the finishing stage and the worker's render after the commit).
 * So what is committed is the version's content itself: a later PATCH, activate or DELETE of the
 * template changes nothing already committed, and the record keeps only where it came from
 * (`template: {id, alias?, version}`).
 *
 * Access as when reading the template (templates/service.ts): an account-level key may send any
 * template of its account, a channel key those linked to its channel, else 403 forbidden; an id
 * of another account's template is 403 too, as GET /templates/{id} answers it. An id or alias the
 * account does not have is 422 `unknown_template` on /template/id or /template/alias, a version
 * the template does not have 422 `invalid_value` on /template/version (as activate answers it).
 *
 * One TemplateLookup serves one request: a batch that names one template in 500 entries, or a
 * broadcast, reads it once.
 */
import { AppError, type FieldError, type FieldErrorList } from '../domain/errors.js';
import { namesStoredTemplate, storedRefOf, type SendTemplateInput, type TemplateInput } from '../domain/send-rules.js';
import { originOf, templateVisibleTo, type TemplateOrigin, type TemplateVersion, type TemplateWithVersion } from '../domain/template.js';
import { isUuid } from '../domain/uuid.js';
import type { StorePort } from '../store/port/index.js';

/** A send's template ready for the pipeline: inline content with its data, and the stored version it came from. */
export interface ResolvedTemplate {
  template: TemplateInput & { data: Record<string, unknown> };
  origin?: TemplateOrigin;
}

interface FieldProblem {
  pointer: string;
  error: FieldError;
}

/** What resolve found: the template, or the field errors to answer (none when the reference's shape is already wrong). */
export type TemplateResolution = { resolved: ResolvedTemplate } | { problems: FieldProblem[] };

export class TemplateLookup {
  private readonly found = new Map<string, Promise<TemplateWithVersion | undefined>>();

  /** `channelId`: the key's channel, null for an account-level key. */
  constructor(private readonly store: Pick<StorePort, 'templates'>, private readonly who: { accountId: string; channelId: string | null }) {}

  /**
   * An inline template as it is, a stored one's version as inline content; throws forbidden
   * (403) for a template the key may not use. `pointer` is the template's (`/template`).
   */
  async resolve(t: SendTemplateInput, pointer: string): Promise<TemplateResolution> {
    const ref = storedRefOf(t);
    if (!ref) {
      // Inline, or a malformed reference whose field errors send-rules.ts gives.
      if (namesStoredTemplate(t)) return { problems: [] };
      return { resolved: { template: { ...t, data: t.data ?? {} } } };
    }
    const found = await this.read(ref.name, ref.version);
    if (!found) return { problems: [await this.whyMissing(ref, pointer)] };
    this.check(found);
    return { resolved: { template: inlineOf(found.version, t.data ?? {}), origin: originOf(found) } };
  }

  private check(found: TemplateWithVersion): void {
    if (!templateVisibleTo(found.template, this.who.channelId)) throw forbidden();
  }

  /** One store read per distinct (name, version) in the request. */
  private read(name: string, version: number | undefined): Promise<TemplateWithVersion | undefined> {
    const key = `${name.toLowerCase()}\n${version ?? ''}`;
    let p = this.found.get(key);
    if (!p) {
      p = this.store.templates.version(this.who.accountId, name, version);
      this.found.set(key, p);
    }
    return p;
  }

  /** A version the template lacks, a template of another account (403), or no such template. */
  private async whyMissing(ref: { name: string; field: '/id' | '/alias'; version?: number }, pointer: string): Promise<FieldProblem> {
    if (ref.version !== undefined) {
      const active = await this.read(ref.name, undefined);
      if (active) {
        this.check(active);
        return { pointer: `${pointer}/version`, error: { code: 'invalid_value', message: `the template has no version ${ref.version}` } };
      }
    }
    const other = isUuid(ref.name) ? await this.store.templates.get(ref.name.toLowerCase()) : undefined;
    if (other && other.accountId !== this.who.accountId) throw forbidden();
    const what = ref.field === '/id' ? 'id' : 'alias';
    return { pointer: `${pointer}${ref.field}`, error: { code: 'unknown_template', message: `the account has no template with the ${what} ${ref.name} (POST /templates first)` } };
  }
}

/** Adds a resolution's field errors; the resolved template, when there is one. */
export function resolvedOrErrors(r: TemplateResolution | undefined, errors: FieldErrorList): ResolvedTemplate | undefined {
  if (!r) return undefined;
  if ('problems' in r) {
    for (const p of r.problems) errors.add(p.pointer, p.error.code, p.error.message);
    return undefined;
  }
  return r.resolved;
}

/** A stored version as a send's inline template: only the parts it has. */
function inlineOf(v: TemplateVersion, data: Record<string, unknown>): TemplateInput & { data: Record<string, unknown> } {
  const t: TemplateInput & { data: Record<string, unknown> } = { subject: v.subject, data };
  if (v.html !== undefined) t.html = v.html;
  if (v.text !== undefined) t.text = v.text;
  if (v.inlineStyles) t.inlineStyles = true;
  return t;
}

function forbidden(): AppError {
  return new AppError('forbidden', 'The API key may not use this template');
}
