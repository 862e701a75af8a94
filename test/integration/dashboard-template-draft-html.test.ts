/**
 * POST /dashboard/templates/preview-html (src/http/routes/dashboard-template-draft-html.ts): the
 * HTML of unsaved template content rendered with sample data, posted by a form into the
 * editor's iframe (one field, draft, holding the JSON body of POST /templates/render), under
 * the sandboxing CSP of a message's HTML: the render of POST /templates/render, with the session
 * cookie alone, refused without a session and from other sites; the form parser is this route's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';

const DASH = { 'x-postrider-dashboard': '1' };
const CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data: cid:; frame-ancestors 'self'";
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const DRAFT = { subject: 'Hi {{name}}', html: '<style>p{color:red}</style>\n<p>Hello {{name}}</p>', inlineStyles: true, data: { name: '<Ann>' } };

let t: TestDaemon;
let cookie: string;

/** The route as the editor's form posts it: the cookie, no dashboard header, no key. */
function post(body: string, headers: Record<string, string> = {}, query = ''): Promise<Response> {
  return fetch(`${t.url}/dashboard/templates/preview-html${query}`, { method: 'POST', headers: { ...FORM, ...headers }, body });
}

const form = (draft: unknown) => new URLSearchParams({ draft: JSON.stringify(draft) }).toString();

beforeAll(async () => {
  t = await startDaemon({ 'templates.maxBytes': 2048 });
  const r = await t.api('POST', '/dashboard/session', { key: null, headers: DASH, body: { apiKey: t.apiKey } });
  cookie = r.headers.get('set-cookie')!.split(';')[0];
});

afterAll(() => t?.stop());

describe('POST /dashboard/templates/preview-html', () => {
  it('answers the HTML POST /templates/render gives for the draft, under the frame policy', async () => {
    const res = await post(form(DRAFT), { cookie, 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'iframe' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CSP);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.text();
    const api = await t.api('POST', '/templates/render', { body: DRAFT });
    expect(body).toBe(api.body.html);
    // The line break inside the JSON field arrives as typed (a form field's would be CRLF).
    expect(body).toContain('<p style="color: red;">Hello &lt;Ann&gt;</p>');
    expect(body).not.toContain('\r');
    const images = await post(form(DRAFT), { cookie }, '?images=1');
    expect(images.headers.get('content-security-policy')).toBe(CSP.replace('cid:', 'cid: https: http:'));
  });

  it('answers the 422s of POST /templates/render, and 422 for a draft without html', async () => {
    const broken = await post(form({ subject: 's', html: '<p>\n{{#if a}}x{{/each}}</p>' }), { cookie });
    expect(broken.status).toBe(422);
    expect(((await broken.json()) as { errors: Record<string, { code: string; line: number }[]> }).errors['/html'][0]).toMatchObject({ code: 'templating_error', line: 2 });
    const big = await post(form({ subject: 's', html: 'é'.repeat(1100) }), { cookie });
    expect(((await big.json()) as { errors: Record<string, { code: string }[]> }).errors[''][0].code).toBe('max_size');
    const noSubject = await post(form({ html: '<p>x</p>' }), { cookie });
    expect(((await noSubject.json()) as { errors: Record<string, { code: string }[]> }).errors['/subject'][0].code).toBe('required');
    const textOnly = await post(form({ subject: 's', text: 't' }), { cookie });
    expect(((await textOnly.json()) as { errors: Record<string, { code: string }[]> }).errors['/html'][0].code).toBe('required');
  });

  it('takes one form field, draft, holding JSON (400 otherwise)', async () => {
    for (const body of ['subject=s&html=x', 'draft=%7Bnope', `${form(DRAFT)}&draft=x`, `${form(DRAFT)}&images=1`]) {
      const res = await post(body, { cookie });
      expect(res.status, body.slice(0, 30)).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
  });

  it('refuses a request without a session (401), and one the browser marks as not same-origin (403)', async () => {
    expect((await post(form(DRAFT))).status).toBe(401);
    expect((await post(form(DRAFT), { cookie, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post(form(DRAFT), { cookie, 'sec-fetch-site': 'same-site' })).status).toBe(403);
    // An API key works as on the API; a refused one is 401.
    expect((await post(form(DRAFT), { authorization: `Bearer ${t.apiKey}` })).status).toBe(200);
    expect((await post(form(DRAFT), { authorization: 'Bearer nope' })).status).toBe(401);
  });

  it('reads form bodies on this route only: the API answers a form 415', async () => {
    const res = await fetch(`${t.url}/templates/render`, { method: 'POST', headers: { ...FORM, authorization: `Bearer ${t.apiKey}` }, body: form(DRAFT) });
    expect(res.status).toBe(415);
  });
});
