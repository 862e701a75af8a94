/**
 * The tasks the worker pool runs: CPU-bound steps kept off the main thread (template rendering,
 * MIME building, RSA/ed25519 signing, key generation). Plain data in, plain data out; what a
 * thread keeps between tasks (compiled templates, parsed keys) is owned by its WorkerTasks.
 */
import { ownBytes } from './bytes.js';
import { composeMessage, type ComposeInput } from './compose.js';
import { QuietStacks } from './quiet-stacks.js';
import { DkimSigner, generateDkimKey, type DkimAlgorithm, type GeneratedKey, type GenerateKeyOptions } from './dkim.js';
import { engagementUrls, trackHtml, type EngagementInput } from './engagement.js';
import { TaskError } from './errors.js';
import { headerSafe, TemplateChecker, TemplateRenderer, type RenderInput, type RenderOutput } from './render.js';

export interface MessageContent {
  subject: string;
  html?: string;
  text?: string;
}

export interface DkimKey {
  domain: string;
  selector: string;
  privateKeyPem: string;
  algorithm: DkimAlgorithm;
  /** An ed25519 key's RSA companion: the message gets a signature with each (dkim.ts). */
  rsaCompanion?: { selector: string; algorithm: 'rsa'; privateKeyPem: string };
}

export interface BuildInput {
  /** A template to render; exactly one of `template` and `content` is given. */
  template?: RenderInput;
  /** Ready content, used as is. */
  content?: MessageContent;
  compose: Omit<ComposeInput, 'subject' | 'html' | 'text'>;
  /** Tracking links and unsubscribe (engagement.ts), applied before signing. */
  engagement?: EngagementInput;
  /**
   * The subject as rendered at intake (submission/template-check.ts), which the message record
   * and its events already carry: a template's subject part is then not rendered again.
   */
  subject?: string;
}

export interface BuildOutput {
  /** The message as composed (CRLF line ends), unsigned: signTimed signs it. */
  raw: Uint8Array;
  /** The rendered subject, html and text, for storing what was sent. */
  subject: string;
  html?: string;
  text?: string;
  /** Byte length of raw. */
  size: number;
}

/** A signed message and the time its signature took on the thread (metrics: without the wait for a thread). */
export interface SignedMessage {
  raw: Uint8Array;
  signSeconds: number;
}

/**
 * One message of the finishing stage (submission/finishing.ts), after its commit: composed from
 * the committed request (API sends) or taken as committed (SMTP), then DKIM-signed if a key is
 * given.
 */
export interface FinishInput {
  build?: BuildInput;
  /** The committed message, when there is nothing to compose. */
  raw?: Uint8Array;
  dkim?: DkimKey;
}

export interface FinishOutput {
  /** The message to deliver: composed and signed. */
  raw: Uint8Array;
  /** Composed messages only: the rendered html and text, and the byte length before the signature. */
  html?: string;
  text?: string;
  size?: number;
  /** The signature's own time on the thread (metrics); absent when not signed. */
  signSeconds?: number;
}

export interface SignRawInput {
  /** A complete message, e.g. one received on the SMTP submission listener. */
  raw: Uint8Array;
  dkim: DkimKey;
}

/** The tasks of one worker thread, with the caches they share from one task to the next. */
export class WorkerTasks {
  /** Made on the first draft: most threads never check one. */
  private checker?: TemplateChecker;
  /** Composition without the stacks of the errors nodemailer's pipelines make and drop (quiet-stacks.ts). */
  private readonly quiet = new QuietStacks();

  constructor(
    private readonly renderer = new TemplateRenderer(),
    private readonly signer = new DkimSigner(),
  ) {}

  /** A template's parts rendered with its data, with the thread's compiled templates (a stored template's preview), checked first when `input.check` (a draft's). */
  render(input: RenderInput): RenderOutput {
    if (input.check) this.checkParts(input);
    if (input.checkOnly) return {};
    return this.renderer.render(input);
  }

  /** Each part as the intake checks it, in the order TemplateService checks a create's (subject, html, text). */
  private checkParts(input: RenderInput): void {
    const checker = (this.checker ??= new TemplateChecker());
    const cache = input.cache !== false;
    if (input.subject !== undefined) checker.check('subject', input.subject, true, cache);
    if (input.html !== undefined) checker.check('html', input.html, false, cache);
    if (input.text !== undefined) checker.check('text', input.text, true, cache);
  }

  async buildMessage(input: BuildInput): Promise<BuildOutput> {
    const urls = input.engagement ? engagementUrls(input.engagement) : {};
    // `{{{unsubscribe}}}` in a template gives the unsubscribe URL (ours wins over template data).
    const withUnsub = urls.unsubscribeUrl && input.template
      ? { ...input, template: { ...input.template, data: { ...input.template.data, unsubscribe: urls.unsubscribeUrl } } }
      : input;
    const content = this.resolveContent(withUnsub);
    if (input.engagement && content.html !== undefined) content.html = trackHtml(content.html, input.engagement);
    const compose = urls.unsubscribeUrl
      ? { ...input.compose, listUnsubscribe: { url: urls.unsubscribeUrl, mailto: urls.unsubscribeMailto } }
      : input.compose;
    const raw = await this.quiet.run(() => composeMessage({ ...compose, ...content }));
    const out: BuildOutput = { raw: ownBytes(raw), subject: content.subject, size: raw.byteLength };
    if (content.html !== undefined) out.html = content.html;
    if (content.text !== undefined) out.text = content.text;
    return out;
  }

  /** Composes (when there is a request) and signs (when there is a key) one committed message. */
  async finishMessage(input: FinishInput): Promise<FinishOutput> {
    let out: FinishOutput;
    if (input.build) {
      const built = await this.buildMessage(input.build);
      out = { raw: built.raw, size: built.size };
      if (built.html !== undefined) out.html = built.html;
      if (built.text !== undefined) out.text = built.text;
    } else if (input.raw) {
      out = { raw: input.raw };
    } else {
      throw new TaskError('internal_error', 'finishMessage needs a request to compose or a raw message');
    }
    if (!input.dkim) return out;
    const signed = await this.signTimed({ raw: out.raw, dkim: input.dkim });
    return { ...out, raw: signed.raw, signSeconds: signed.signSeconds };
  }

  /** DKIM-signs a message as it is (existing DKIM-Signature fields are kept), with the time the signature took. */
  async signTimed(input: SignRawInput): Promise<SignedMessage> {
    const raw = Buffer.from(input.raw.buffer, input.raw.byteOffset, input.raw.byteLength);
    const start = performance.now();
    const signed = await this.signer.sign({ raw, ...input.dkim });
    return { raw: ownBytes(signed), signSeconds: (performance.now() - start) / 1000 };
  }

  generateKey(opts: GenerateKeyOptions): GeneratedKey {
    return generateDkimKey(opts);
  }

  private resolveContent(input: BuildInput): MessageContent {
    if (input.template && input.content) {
      throw new TaskError('internal_error', 'buildMessage takes either a template or content, not both');
    }
    if (input.template) {
      // A subject rendered at intake is not rendered again (the same data would give the same text).
      const template = input.subject === undefined ? input.template : { ...input.template, subject: undefined };
      const rendered = this.renderer.render(template);
      const content: MessageContent = { subject: input.subject ?? rendered.subject ?? '' };
      if (rendered.html !== undefined) content.html = rendered.html;
      if (rendered.text !== undefined) content.text = rendered.text;
      return content;
    }
    // The same line-break removal the template path gets, so the stored subject is the one sent.
    if (input.content) return { ...input.content, subject: headerSafe(input.content.subject) };
    throw new TaskError('internal_error', 'buildMessage needs a template or content');
  }
}
