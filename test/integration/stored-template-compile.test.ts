/**
 * "Compiled once per version and cached" (issue 34): a stored version sent many times, with
 * other data each time, is resolved from a real store (submission/stored-template.ts) into the
 * same sources every time, so the intake's check (TemplateChecker) and a worker thread's render
 * (WorkerTasks' TemplateRenderer) compile each part once: counted, not timed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StorePort } from '../../src/store/port/index.js';
import { TemplateLookup } from '../../src/submission/stored-template.js';
import { TemplateChecker, TemplateRenderer } from '../../src/workers/render.js';
import { WorkerTasks } from '../../src/workers/tasks.js';
import { openStore } from '../support/store.js';

let dir: string;
let store: StorePort;
let accountId: string;
let templateId: string;

const LIMITS = { maxPerAccount: 10, maxVersions: 10 };

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-tpl-compile-'));
  store = await openStore(dir);
  accountId = (await store.accounts.create({ name: 'compile', state: 'active' })).id;
  const created = await store.templates.create({
    accountId,
    name: 'Receipt',
    alias: 'receipt',
    channelIds: [],
    content: { subject: 'Receipt {{n}}', html: '<p>Total {{total}}</p>', text: 'Total {{total}}' },
    limits: LIMITS,
  });
  templateId = created.template.id;
  await store.templates.update(templateId, { patch: {}, content: { subject: 'Receipt no. {{n}}', text: 'Sum {{total}}' }, limits: LIMITS });
});

afterAll(async () => {
  await store?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** What the pipeline gets for one send naming the template, as a fresh request would resolve it. */
async function resolve(ref: { alias?: string; id?: string; version?: number }, data: Record<string, unknown>) {
  const r = await new TemplateLookup(store, { accountId, channelId: null }).resolve({ ...ref, data }, '/template');
  if (!('resolved' in r)) throw new Error(`not resolved: ${JSON.stringify(r)}`);
  return r.resolved;
}

describe('a stored version sent again', () => {
  it('is compiled once per part by the intake check and by a worker thread, whatever the data', async () => {
    const checker = new TemplateChecker();
    const renderer = new TemplateRenderer();
    const tasks = new WorkerTasks(renderer);
    const texts: string[] = [];
    for (let n = 1; n <= 50; n++) {
      // Every request resolves anew (its own lookup): the sources are the version's, each time.
      const { template, origin } = await resolve(n % 2 ? { alias: 'receipt', version: 1 } : { id: templateId, version: 1 }, { n, total: n * 10 });
      expect(origin).toEqual({ id: templateId, alias: 'receipt', version: 1 });
      checker.check('html', template.html!, false);
      checker.check('text', template.text!, true);
      const subject = checker.renderSubject(template.subject!, template.data);
      const out = await tasks.finishMessage({
        build: { template, subject, compose: { from: { email: 'shop@example.com' }, to: [{ email: 'ann@example.org' }], messageId: `<m${n}@example.com>`, date: 'Fri, 07 Jun 2024 08:09:10 GMT' } },
      });
      texts.push(`${subject} / ${out.text}`);
    }
    expect(texts.slice(0, 2)).toEqual(['Receipt 1 / Total 10', 'Receipt 2 / Total 20']);
    // html and text checked once, the subject rendered from one compiled template, html and text rendered from one each.
    expect([checker.misses, checker.subjectMisses, renderer.misses]).toEqual([2, 1, 2]);

    // Another version is other sources: compiled once more, then cached as well.
    for (let n = 1; n <= 10; n++) {
      const { template } = await resolve({ alias: 'receipt' }, { n, total: n });
      expect(template).toEqual({ subject: 'Receipt no. {{n}}', text: 'Sum {{total}}', data: { n, total: n } });
      checker.check('text', template.text!, true);
      await tasks.finishMessage({ build: { template, subject: checker.renderSubject(template.subject!, template.data), compose: { from: { email: 'shop@example.com' }, to: [{ email: 'b@example.org' }], messageId: `<v2-${n}@example.com>`, date: 'Fri, 07 Jun 2024 08:09:10 GMT' } } });
    }
    expect([checker.misses, checker.subjectMisses, renderer.misses]).toEqual([3, 2, 3]);
  });
});
