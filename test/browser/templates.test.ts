/**
 * The Templates pages (issue 34) in chromium against a real daemon: create a template through
 * the form, seeing the API's render of the unsaved form with sample data before the save
 * (subject, the HTML in its sandboxed frame with its inline styles applied, the text), then of
 * the saved version; edit it and see the edit previewed before the save, break it (`{{#if}}` without its close) and
 * see the save's templating_error beside the HTML field with its line and column, save a new
 * version, activate version 1 again from the versions list, delete. The list filters by name.
 * axe, screenshots at 360 and 1,280 px and no sideways scroll at 360 px on every page.
 */
import path from 'node:path';
import { expect, it } from 'vitest';
import { SCREENSHOT_DIR, useRig } from './harness.js';

const rig = useRig();

/** The page fits 360 px without a sideways scroll (tables scroll in their own box). */
async function fitsPhone(): Promise<void> {
  const page = rig.page;
  await page.setViewportSize({ width: 360, height: 800 });
  await expect.poll(() => page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function checkPage(name: string): Promise<void> {
  await rig.checkA11y();
  await fitsPhone();
  await rig.screenshot(name);
}

/** The computed color and font size of the mail's paragraph in the preview frame. */
async function frameStyle(): Promise<string> {
  // The tests are type-checked without the DOM library: the frame's getComputedStyle, typed here.
  type Styles = { getComputedStyle(e: unknown): { color: string; fontSize: string } };
  return rig.page.frameLocator('iframe.mail-frame').locator('p').evaluate((p) => {
    const s = (globalThis as unknown as Styles).getComputedStyle(p);
    return `${s.color} ${s.fontSize}`;
  });
}

const HTML_V1 = '<style>p { color: rgb(0, 128, 0); }</style>\n<p style="font-size: 20px">Hello {{name}}</p>';
const BROKEN = '<p>\n  {{#if vip}}Dear {{name}}\n</p>';

it('creates a template, previews it with sample data, shows a broken part at its line and column, saves, activates version 1 again and deletes it', async () => {
  const page = rig.page;
  await rig.visit('/templates');
  await page.getByRole('heading', { name: 'No templates yet' }).waitFor();
  await checkPage('templates-empty');

  await page.getByRole('link', { name: 'New template' }).click();
  await page.getByRole('heading', { name: 'New template', level: 1 }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('Welcome mail');
  await page.getByLabel('Alias (optional)').fill('welcome');
  await page.getByText('Type a subject, and HTML or text, to see them rendered.').waitFor();
  await page.getByLabel('Sample data (JSON)').fill('{"name": "Ann <3"}');
  await page.getByLabel('Subject', { exact: true }).fill('Hi {{name}}');
  await page.getByLabel('HTML', { exact: true }).fill(HTML_V1);
  await page.getByLabel('Text', { exact: true }).fill('Hello {{name}}, welcome.');
  // Before the first save: the API renders the form's content (POST /templates/render), the HTML
  // in its sandboxed frame (posted to it) with the mail's own styles; nothing is stored.
  await page.getByText('Preview of your unsaved edits. Nothing is stored until you create the template.').waitFor();
  await page.getByText('Your unsaved edits, rendered by the API with the sample data.').waitFor();
  const preview = page.locator('.template-preview');
  await preview.getByText('Hi Ann <3', { exact: true }).waitFor();
  await expect.poll(() => preview.locator('pre').textContent()).toBe('Hello Ann <3, welcome.');
  const frame = page.frameLocator('iframe.mail-frame');
  await frame.getByText('Hello Ann <3').waitFor();
  expect(await frameStyle()).toBe('rgb(0, 128, 0) 20px');
  expect(await page.locator('iframe.mail-frame').getAttribute('sandbox')).toBe('');
  expect((await rig.t.api('GET', '/templates')).body.totalCount).toBe(0);
  await checkPage('template-new');
  await page.getByRole('button', { name: 'Create template' }).click();

  // The template's page: version 1, active; the preview renders it with the sample data typed before.
  await page.getByRole('heading', { name: 'Welcome mail', level: 1 }).waitFor();
  await page.getByText('Version 1 of 1, active.').waitFor();
  expect(await page.getByLabel('Sample data (JSON)').inputValue()).toBe('{"name": "Ann <3"}');
  await page.getByText('Version 1, rendered by the API with the sample data.').waitFor();
  await preview.getByText('Hi Ann <3', { exact: true }).waitFor();
  await expect.poll(() => preview.locator('pre').textContent()).toBe('Hello Ann <3, welcome.');
  // The HTML in its sandboxed frame: escaped data, and the mail's own styles apply (its own CSP, not the dashboard's).
  await frame.getByText('Hello Ann <3').waitFor();
  expect(await frameStyle()).toBe('rgb(0, 128, 0) 20px');
  expect(await page.locator('iframe.mail-frame').getAttribute('sandbox')).toBe('');
  // Sample data that is not an object says so beside the field, without asking the API.
  await page.getByLabel('Sample data (JSON)').fill('[1, 2');
  await page.getByText(/^Not JSON/).waitFor();
  await page.getByLabel('Sample data (JSON)').fill('{"name": "Ann"}');
  await preview.getByText('Hi Ann', { exact: true }).waitFor();
  await frame.getByText('Hello Ann', { exact: true }).waitFor();
  await checkPage('template');
  // Chromium leaves the sandboxed (out-of-process) frame blank in full-page shots at times: the frame on its own.
  await page.locator('iframe.mail-frame').screenshot({ path: path.join(SCREENSHOT_DIR, 'template-html-frame.png') });

  // An edit is previewed before it is saved, and adds nothing to the tab's history (each body gets a new frame).
  const history = await page.evaluate('history.length');
  await page.getByLabel('HTML', { exact: true }).fill('<p style="font-size: 20px">Howdy {{name}}</p>');
  await page.getByText('Preview of your unsaved edits. Sends use version 1 until you save.').waitFor();
  await frame.getByText('Howdy Ann', { exact: true }).waitFor();
  await page.getByLabel('HTML', { exact: true }).fill('<p style="font-size: 20px">Howdy there, {{name}}</p>');
  await frame.getByText('Howdy there, Ann', { exact: true }).waitFor();
  expect(await page.evaluate('history.length')).toBe(history);
  await checkPage('template-unsaved');

  // A broken HTML part: the preview's templating_error beside the field as it is typed, then the save's, with its line and column.
  rig.expectErrors(/^422 POST .*\/templates\/render$/);
  rig.expectErrors(/^422 PATCH .*\/templates\//);
  rig.expectErrors(/status of 422/);
  await page.getByLabel('HTML', { exact: true }).fill(BROKEN);
  const fieldError = page.locator('.field-error', { hasText: 'html template' });
  await fieldError.waitFor();
  await page.getByText('The last render failed: the error is beside the field it names.').waitFor();
  const patched = page.waitForResponse((r) => r.request().method() === 'PATCH');
  await page.getByRole('button', { name: 'Save as version 2' }).click();
  expect((await patched).status()).toBe(422);
  expect(await fieldError.textContent()).toMatch(/^At line \d+, column \d+: The html template could not be rendered/);
  expect(await page.getByLabel('HTML', { exact: true }).getAttribute('aria-invalid')).toBe('true');
  const goTo = page.getByRole('button', { name: /^Go to line \d+, column \d+ of HTML$/ });
  await goTo.click();
  expect(await page.evaluate('document.activeElement.tagName')).toBe('TEXTAREA');
  await checkPage('template-error');

  // Fixed: previewed before the save; saved: version 2, active, previewed with the same sample data.
  await page.getByLabel('HTML', { exact: true }).fill('<p>Welcome aboard, {{name}}</p>');
  await frame.getByText('Welcome aboard, Ann').waitFor();
  expect((await rig.t.api('GET', '/templates/welcome')).body.latestVersion).toBe(1);
  await page.getByRole('button', { name: 'Save as version 2' }).click();
  await page.getByText('Saved as version 2, which is now active: sends use it.').waitFor();
  await page.getByText('Version 2 of 2, active.').waitFor();
  await frame.getByText('Welcome aboard, Ann').waitFor();
  expect((await rig.t.api('GET', '/templates/welcome')).body.activeVersion).toBe(2);

  // Version 1 again: open it from the list of versions, then activate it.
  const versions = page.getByRole('region', { name: 'Template versions', exact: true });
  await versions.getByRole('link', { name: 'Version 1' }).click();
  await page.getByText('You are looking at version 1. Version 2 is active: sends use it.').waitFor();
  await frame.getByText('Hello Ann', { exact: true }).waitFor();
  await checkPage('template-version');
  await page.getByRole('button', { name: 'Activate version 1' }).first().click();
  await page.getByText('Version 1 is active: sends use it.').waitFor();
  await page.getByText('Version 1 of 2, active.').waitFor();
  expect((await rig.t.api('GET', '/templates/welcome')).body.activeVersion).toBe(1);

  // Delete after a confirmation: back to the list, and the API no longer knows it.
  await page.getByRole('button', { name: 'Delete template' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete Welcome mail?' });
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Delete template' }).click();
  await page.getByRole('heading', { name: 'Templates', level: 1 }).waitFor();
  await page.getByRole('heading', { name: 'No templates yet' }).waitFor();
  expect((await rig.t.api('GET', '/templates/welcome')).status).toBe(404);
});

it('lists templates with their alias and active version, filtered by part of the name', async () => {
  for (const name of ['Order shipped', 'Order delivered', 'Password reset']) {
    const made = await rig.t.api('POST', '/templates', { body: { name, subject: name, text: `${name} {{id}}` } });
    expect(made.status).toBe(200);
  }
  const reset = await rig.t.api('GET', '/templates?name=password');
  await rig.t.api('PATCH', `/templates/${reset.body.results[0].id}`, { body: { alias: 'reset', text: 'v2' } });
  const page = rig.page;
  await rig.visit('/templates');
  const row = page.getByRole('row', { name: /Password reset/ });
  await row.waitFor();
  expect(await row.getByRole('cell').allTextContents()).toEqual(['Password reset', 'reset', '2 of 2', expect.any(String)]);
  await page.getByLabel('Name contains').fill('order');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect.poll(() => page.getByRole('row').count()).toBe(3);
  expect(page.url()).toContain('/dashboard/templates?name=order');
  await checkPage('templates');
});

it('previews a saved version with sample data too long for the frame\'s address: a note instead of a refused frame', async () => {
  const made = await rig.t.api('POST', '/templates', { body: { name: 'Long data', subject: 'Hi {{name}}', html: '<p>Hello {{name}}</p>', text: 'Hello {{name}}' } });
  expect(made.status).toBe(200);
  const page = rig.page;
  await rig.visit(`/templates/${made.body.id}`);
  await page.getByText('Version 1, rendered by the API with the sample data.').waitFor();
  // 2,011 characters of JSON, far below the 8,000 the frame route takes, but 18,000 once percent-encoded.
  const name = '日本'.repeat(1000);
  await page.getByLabel('Sample data (JSON)').fill(JSON.stringify({ name }));
  const preview = page.locator('.template-preview');
  await preview.getByText(`Hi ${name}`, { exact: true }).waitFor();
  await preview.getByText(/The HTML preview takes sample data up to 8,000 characters of JSON, fewer outside ASCII/).waitFor();
  expect(await page.locator('iframe.mail-frame').count()).toBe(0);
  // Short data shows the frame again.
  await page.getByLabel('Sample data (JSON)').fill('{"name": "Ann"}');
  await page.frameLocator('iframe.mail-frame').getByText('Hello Ann', { exact: true }).waitFor();
});
