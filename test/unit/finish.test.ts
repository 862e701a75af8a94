/**
 * The finishing stage's worker side (src/workers/tasks.ts finishMessage) and the intake's template
 * check (src/workers/render.ts TemplateChecker): composing after the commit must give the same
 * bytes every time from the same committed request (a restart composes again), and what the
 * check lets through must render.
 */
import { describe, expect, it } from 'vitest';
import { generateDkimKey } from '../../src/workers/dkim.js';
import { TemplateChecker, TemplateRenderer } from '../../src/workers/render.js';
import { WorkerTasks, type BuildInput } from '../../src/workers/tasks.js';

const request: BuildInput = {
  template: { subject: 'ignored: rendered at intake', html: '<p>{{name}}</p><img src="cid:logo">', text: 'Hi {{name}}', data: { name: 'Ann' } },
  subject: 'Hi Ann',
  compose: {
    from: { email: 'shop@example.com', name: 'Shop' },
    to: [{ email: 'ann@example.org' }],
    messageId: '<0b9e7f8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b@example.com>',
    date: 'Fri, 07 Jun 2024 08:09:10 GMT',
    baseBoundary: '0b9e7f8a1c2d4e5f8a9b0c1d2e3f4a5b',
    attachments: [
      { content: Buffer.from('logo').toString('base64'), fileName: 'logo.png', contentId: 'logo', disposition: 'inline' },
      { content: Buffer.from('%PDF').toString('base64'), fileName: 'r.pdf' },
    ],
  },
};

describe('finishMessage', () => {
  it('composes the same bytes from the same request in two threads (fixed boundaries, Date and Message-ID)', async () => {
    const a = await new WorkerTasks().finishMessage({ build: request });
    const b = await new WorkerTasks().finishMessage({ build: request });
    const raw = Buffer.from(a.raw).toString();
    expect(raw).toBe(Buffer.from(b.raw).toString());
    expect(raw).toMatch(/^Subject: Hi Ann\r$/m);
    expect(raw).toContain('multipart/mixed');
    expect(raw).toContain('0b9e7f8a1c2d4e5f8a9b0c1d2e3f4a5b');
    expect(a).toMatchObject({ html: '<p>Ann</p><img src="cid:logo">', text: 'Hi Ann', size: a.raw.byteLength });
    expect(a.signSeconds).toBeUndefined();
  });

  it('signs what it composed, and signs a raw message as it is', async () => {
    const key = generateDkimKey({ algorithm: 'ed25519' });
    const dkim = { domain: 'example.com', selector: 's1', algorithm: 'ed25519' as const, privateKeyPem: key.privateKeyPem };
    const tasks = new WorkerTasks();
    const composed = await tasks.finishMessage({ build: request });
    const signed = await tasks.finishMessage({ build: request, dkim });
    const text = Buffer.from(signed.raw).toString();
    expect(text).toMatch(/^DKIM-Signature: /);
    expect(text.endsWith(Buffer.from(composed.raw).toString())).toBe(true);
    expect(signed.size).toBe(composed.size);
    const raw = await tasks.finishMessage({ raw: composed.raw, dkim });
    expect(Buffer.from(raw.raw).toString()).toMatch(/^DKIM-Signature: [^]*\r\nFrom: /);
    expect(raw.size).toBeUndefined();
  });
});

describe('TemplateChecker', () => {
  const checker = new TemplateChecker();
  const reason = (source: string) => {
    try {
      checker.check('html', source, false);
      return undefined;
    } catch (err) {
      return (err as Error & { code: string; field: string }).code + ' ' + (err as { field: string }).field;
    }
  };

  it('refuses, as templating_error on the part, what fails on every render whatever the data', () => {
    for (const source of ['{{#if}}broken', '{{#if}}x{{/if}}', '{{#each}}x{{/each}}', '{{missing 1}}', '{{x (missing 1)}}', '{{#missing a}}x{{/missing}}', '{{> partial}}', '{{if a}}']) {
      expect(reason(source), source).toBe('templating_error html');
      // The worker's renderer refuses it too.
      expect(() => new TemplateRenderer().render({ html: source, data: { a: 1 } }), source).toThrow();
    }
  });

  it('lets through what renders, and renders subjects', () => {
    for (const source of ['{{name}} {{{raw}}}', '{{#if a}}x{{else}}y{{/if}}', '{{#each items}}{{this}}{{/each}}', '{{#with a}}{{b}}{{/with}}', '{{lookup a "b"}}', '{{#section}}x{{/section}}', '{{a.b.c}}']) {
      expect(reason(source), source).toBeUndefined();
      expect(() => new TemplateRenderer().render({ html: source, data: { a: { b: 1 }, items: [1] } }), source).not.toThrow();
    }
    expect(checker.renderSubject('Order {{n}}\r\nBcc: x', { n: 1 })).toBe('Order 1 Bcc: x');
  });
});
