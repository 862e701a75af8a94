/**
 * Holds every answer the integration suites receive against the daemon's own OpenAPI document,
 * the way fastify checks its error catalogue against its docs: the status must be documented
 * for the operation, and a JSON body must be valid against the documented schema of that status
 * and media type. apiRequest (daemon.ts) calls it on every answer; a mismatch throws, so the
 * suite that received it fails and names the operation. Fix the document (src/http/contract.ts
 * or the route schema), not the test.
 *
 * POSTRIDER_OPENAPI_CHECK=0 turns it off (to look at a failure without it).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, any>;

interface Checker {
  doc: Json;
  ajv: Ajv2020;
  routes: { pattern: RegExp; path: string }[];
  compiled: Map<string, ValidateFunction>;
}

const DOC_ID = 'postrider-openapi.json';
const checkers = new Map<string, Promise<Checker | null>>();

/** Statuses any URL may get before a route is found (unknown path or method, URL too long). */
const UNROUTED = new Set([400, 404, 405, 414, 500, 503]);

async function checkerFor(baseUrl: string): Promise<Checker | null> {
  let found = checkers.get(baseUrl);
  if (!found) {
    found = (async () => {
      const res = await fetch(`${baseUrl}/openapi.json`).catch(() => null);
      if (!res || res.status !== 200) return null; // a daemon shutting down: nothing to check against
      const doc = (await res.json()) as Json;
      const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateFormats: true }));
      ajv.addSchema({ ...doc, $id: DOC_ID });
      const routes = Object.keys(doc.paths).map((path) => ({
        path,
        pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
      }));
      return { doc, ajv, routes, compiled: new Map() };
    })();
    checkers.set(baseUrl, found);
  }
  return found;
}

function pointer(...segments: string[]): string {
  return '#/' + segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

function validatorFor(c: Checker, ref: string): ValidateFunction {
  let v = c.compiled.get(ref);
  if (!v) {
    v = c.ajv.compile({ $ref: DOC_ID + ref });
    c.compiled.set(ref, v);
  }
  return v;
}

export interface Answer {
  method: string;
  urlPath: string;
  status: number;
  contentType: string | null;
  body: unknown;
}

/** Throws when the answer is not what the document says the operation answers. */
export async function checkAgainstDocument(baseUrl: string, a: Answer): Promise<void> {
  if (process.env.POSTRIDER_OPENAPI_CHECK === '0') return;
  const path = a.urlPath.split('?')[0];
  if (path === '/openapi.json') return;
  const c = await checkerFor(baseUrl);
  if (!c) return;
  const method = (a.method.toUpperCase() === 'HEAD' ? 'get' : a.method.toLowerCase());
  const media = (a.contentType ?? '').split(';')[0].trim().toLowerCase();
  const route = c.routes.find((r) => r.pattern.test(path));
  const op = route ? c.doc.paths[route.path][method] : undefined;
  const where = `${a.method} ${a.urlPath} -> ${a.status}`;
  if (!op || !route) {
    if (!UNROUTED.has(a.status)) throw new Error(`OpenAPI check: ${where}: no documented operation, and ${a.status} is not an unrouted answer`);
    if (a.body !== null && a.method.toUpperCase() !== 'HEAD') validate(c, pointer('components', 'schemas', 'Problem'), a.body, where);
    return;
  }
  const response = op.responses[String(a.status)];
  if (!response) {
    throw new Error(`OpenAPI check: ${where}: status ${a.status} is not documented for ${method.toUpperCase()} ${route.path} (documented: ${Object.keys(op.responses).join(', ')})`);
  }
  if (a.method.toUpperCase() === 'HEAD' || a.body === null || a.body === '') return;
  const content = response.content as Json | undefined;
  if (!content) throw new Error(`OpenAPI check: ${where}: a body came, the document says ${a.status} has none`);
  // `*/*`: an operation that serves bytes with the type they came with (an inbound message's attachment).
  if (!(media in content) && '*/*' in content) return;
  if (!(media in content)) throw new Error(`OpenAPI check: ${where}: media type ${media} is not documented (documented: ${Object.keys(content).join(', ')})`);
  if (!content[media].schema || typeof a.body === 'string') return;
  validate(c, pointer('paths', route.path, method, 'responses', String(a.status), 'content', media, 'schema'), a.body, where);
}

function validate(c: Checker, ref: string, body: unknown, where: string): void {
  const v = validatorFor(c, ref);
  if (!v(body)) {
    throw new Error(`OpenAPI check: ${where}: body does not match the documented schema: ${(v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`).join('; ')}\n${JSON.stringify(body).slice(0, 2000)}`);
  }
}
