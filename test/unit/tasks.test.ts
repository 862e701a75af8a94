import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { generateDkimKey, splitTxt } from '../../src/workers/dkim.js';
import { dkimpyAvailable, dkimpyVerify } from '../support/dkimpy.js';
import { WorkerTasks, type BuildInput, type SignRawInput } from '../../src/workers/tasks.js';
import runTask from '../../src/workers/worker.js';

// The tasks of one worker thread, as worker.ts makes them.
const tasks = new WorkerTasks();
const buildMessage = (input: BuildInput) => tasks.buildMessage(input);
const signRaw = async (input: SignRawInput) => (await tasks.signTimed(input)).raw;
const generateKey = tasks.generateKey.bind(tasks);

const compose: BuildInput['compose'] = {
  from: { email: 'shop@example.com', name: 'Shop' },
  to: [{ email: 'buyer@example.org' }],
  messageId: '<order-42@example.com>',
  date: '2024-06-07T08:09:10.000Z',
};

describe('buildMessage', () => {
  it('renders the template, composes and returns the rendered parts with the raw bytes and their size', async () => {
    const out = await buildMessage({
      template: { subject: 'Order {{id}}', html: '<p>{{item}}</p>', text: 'Item: {{item}}', data: { id: 42, item: 'Tea & Cake' } },
      compose,
    });
    expect(out.subject).toBe('Order 42');
    expect(out.html).toBe('<p>Tea &amp; Cake</p>');
    expect(out.text).toBe('Item: Tea & Cake');
    expect(out.raw).toBeInstanceOf(Uint8Array);
    expect(out.size).toBe(out.raw.byteLength);
    // The bytes own their memory exactly, so a structured clone copies nothing more.
    expect(out.raw.byteOffset).toBe(0);
    expect(out.raw.buffer.byteLength).toBe(out.raw.byteLength);
    const parsed = await simpleParser(Buffer.from(out.raw));
    expect(parsed.subject).toBe('Order 42');
    expect(parsed.text?.trim()).toBe('Item: Tea & Cake');
    expect(Buffer.from(out.raw).toString('latin1')).not.toMatch(/^DKIM-Signature:/m);
  });

  it('uses ready content as is and strips line breaks from its subject', async () => {
    const out = await buildMessage({ content: { subject: 'Plain\r\nsubject', text: 'Body {{not}} a template' }, compose });
    expect(out.subject).toBe('Plain subject');
    expect(out.html).toBeUndefined();
    expect((await simpleParser(Buffer.from(out.raw))).text?.trim()).toBe('Body {{not}} a template');
  });

  it('builds a message that signs with a DKIM key', async () => {
    const key = generateDkimKey({ algorithm: 'ed25519' });
    const out = await buildMessage({ content: { subject: 'Signed', text: 'hello' }, compose });
    const signed = await tasks.signTimed({ raw: out.raw, dkim: { domain: 'example.com', selector: 'pr1', privateKeyPem: key.privateKeyPem, algorithm: 'ed25519' } });
    const raw = Buffer.from(signed.raw);
    expect(raw.toString('latin1')).toMatch(/^DKIM-Signature: v=1; a=ed25519-sha256;/);
    const verified = await dkimVerify(raw, { resolver: async () => [splitTxt(key.dnsValue)] });
    expect(verified.results.map((r) => r.status.result)).toEqual(['pass']);
  });

  it('passes a template error through as templating_error with its field', async () => {
    await expect(buildMessage({ template: { subject: 'ok', text: '{{#each}}', data: {} }, compose })).rejects.toMatchObject({
      code: 'templating_error',
      field: 'text',
    });
  });

  it('refuses input with both a template and content, or with neither', async () => {
    await expect(buildMessage({ template: { subject: 'a', data: {} }, content: { subject: 'b' }, compose })).rejects.toMatchObject({ code: 'internal_error' });
    await expect(buildMessage({ compose })).rejects.toMatchObject({ code: 'internal_error' });
  });
});

describe('signTimed', () => {
  it('signs a finished message given as bytes, keeping the message after the new field', async () => {
    const key = generateDkimKey({ algorithm: 'rsa' });
    const built = await buildMessage({ content: { subject: 'From SMTP', text: 'submitted body' }, compose });
    const signed = await signRaw({ raw: built.raw, dkim: { domain: 'example.com', selector: 'smtp', privateKeyPem: key.privateKeyPem, algorithm: 'rsa' } });
    expect(signed).toBeInstanceOf(Uint8Array);
    const buf = Buffer.from(signed);
    expect(Buffer.compare(buf.subarray(buf.length - built.raw.length), Buffer.from(built.raw))).toBe(0);
    const verified = await dkimVerify(buf, { resolver: async () => [splitTxt(key.dnsValue)] });
    expect(verified.results.map((r) => r.status.result)).toEqual(['pass']);
  });
});

describe('finishMessage', () => {
  it('composes and signs text and html messages that an independent verifier (dkimpy) and mailauth pass', async () => {
    const rsa = generateDkimKey({ algorithm: 'rsa' });
    const dkim = { domain: 'example.com', selector: 'fin', privateKeyPem: rsa.privateKeyPem, algorithm: 'rsa' as const };
    const contents = [
      { subject: 'Receipt', text: 'Thank you for your order.\nTotal 82.68 EUR.\n', html: '<p>Thank you for your order.</p>' },
      // Tabs, space runs and trailing spaces: the body hash that canonicalizes lines.
      { subject: 'Grüße  aus Köln', text: 'col\tcol  two   \n\n\n', html: `<p>${'long line '.repeat(20)}</p>\n\n` },
      { subject: 'Only text', text: 'one part' },
      { subject: 'Non-Latin', text: '日本語のテキスト', html: '<p>日本語</p>' },
    ];
    for (const content of contents) {
      const out = await tasks.finishMessage({ build: { content, compose: { ...compose, baseBoundary: 'b0' } }, dkim });
      const raw = Buffer.from(out.raw);
      if (dkimpyAvailable()) expect(await dkimpyVerify(raw, rsa.dnsValue), content.subject).toBe('pass');
      const verified = await dkimVerify(raw, { resolver: async () => [splitTxt(rsa.dnsValue)] });
      expect(verified.results.map((r) => r.status.result), content.subject).toEqual(['pass']);
      const parsed = await simpleParser(raw);
      expect(parsed.text?.trim()).toBe(content.text.trim());
      if (content.html) expect(parsed.html).toBe(content.html);
    }
  });
});

describe('generateKey', () => {
  it('generates a DKIM key pair', () => {
    expect(generateKey({ algorithm: 'ed25519' }).dnsValue).toMatch(/^v=DKIM1; k=ed25519; p=/);
  });
});

describe('worker entry', () => {
  it('returns ok with the value of the task', async () => {
    const res = await runTask({ task: 'generateKey', input: { algorithm: 'ed25519' } });
    expect(res.ok).toBe(true);
    expect(res.ok && (res.value as { algorithm: string }).algorithm).toBe('ed25519');
  });

  it('returns a task error as plain data instead of throwing', async () => {
    const res = await runTask({ task: 'build', input: { template: { subject: '{{/x}}', data: {} }, compose } });
    expect(res).toEqual({ ok: false, error: { code: 'templating_error', message: expect.stringContaining('subject'), field: 'subject', line: 1, column: 1 } });
    // Plain data: no Error instance, survives structured cloning unchanged.
    expect(structuredClone(res)).toEqual(res);
  });

  it('turns an unexpected error into internal_error', async () => {
    const res = await runTask({ task: 'build', input: null });
    expect(res.ok).toBe(false);
    expect(!res.ok && res.error.code).toBe('internal_error');
  });

  it('answers an unknown task with internal_error', async () => {
    const res = await runTask({ task: 'nope' as 'build', input: {} });
    expect(res).toEqual({ ok: false, error: { code: 'internal_error', message: 'Unknown worker task "nope"' } });
  });
});

describe('render', () => {
  it('checks a draft\'s parts first (check: true), as the intake does: a call to an unknown helper fails at its place whatever the data', () => {
    const draft = { subject: 's', text: 'line one\n{{#if a}}{{shout name}}{{/if}}', data: { a: false } };
    // Rendered alone, the call is never reached with this data.
    expect(tasks.render(draft).text).toBe('line one\n');
    let caught: unknown;
    try {
      tasks.render({ ...draft, check: true, cache: false });
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'templating_error', field: 'text', line: 2, column: 10 });
    expect(tasks.render({ subject: 'Hi {{n}}', html: '<p>{{n}}</p>', data: { n: '<b>' }, check: true, cache: false })).toEqual({ subject: 'Hi <b>', html: '<p>&lt;b&gt;</p>' });
  });
});
