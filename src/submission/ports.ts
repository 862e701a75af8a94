/**
 * What submission needs from parts built elsewhere, as narrow interfaces: the worker pool that
 * renders, composes and signs, and the domain registry that says which domains a channel may
 * send from and with which DKIM key. daemon.ts plugs the real implementations in.
 */
import type { Address } from '../domain/address.js';
import type { Attachment, TemplateInput } from '../domain/send-rules.js';
import type { EngagementInput } from '../workers/engagement.js';
import type { RawContent } from './raw-content.js';

export interface DkimKeyRef {
  domain: string;
  selector: string;
  algorithm: 'rsa' | 'ed25519';
  privateKeyPem: string;
  /** An ed25519 key's RSA companion, once its record is verified: signed with both (RFC 8463 3). */
  rsaCompanion?: { selector: string; algorithm: 'rsa'; privateKeyPem: string };
}

export interface BuildRequest {
  template?: TemplateInput & { data: Record<string, unknown> };
  content?: { subject: string; html?: string; text?: string };
  compose: {
    from: Address;
    to: Address[];
    cc?: Address[];
    replyTo?: Address[];
    attachments?: Pick<Attachment, 'content' | 'fileName' | 'contentType' | 'contentId' | 'disposition'>[];
    headers?: Record<string, string>;
    messageId: string;
    date: string;
    listUnsubscribe?: { url: string; mailto?: string };
    /** Shared part of the multipart boundaries: fixed, so that composing again gives the same bytes. */
    baseBoundary?: string;
  };
  /** Tracking links, open pixel and unsubscribe, applied by the worker before signing. */
  engagement?: EngagementInput;
  /** A template's subject as rendered at intake (template-check.ts): not rendered again. */
  subject?: string;
}

/** One committed message for the finishing stage: composed from `build`, or `raw` as committed; signed when `dkim` is given. */
export interface FinishRequest {
  build?: BuildRequest;
  raw?: Uint8Array;
  dkim?: DkimKeyRef;
}

export interface FinishResult {
  /** The message to deliver, composed and signed. */
  raw: Uint8Array;
  /** Composed messages only: the rendered parts and the byte length before the signature. */
  html?: string;
  text?: string;
  size?: number;
}

export interface BuildResult {
  raw: Uint8Array;
  subject: string;
  html?: string;
  text?: string;
  size: number;
}

export interface MessageBuilder {
  /** Builds one message now: a broadcast's check that its template renders, before the 200 (broadcast.ts). */
  build(input: BuildRequest): Promise<BuildResult>;
  /** Composes and signs committed messages in one pool task (the finishing stage), each settling on its own, in order. */
  finish(inputs: FinishRequest[]): Promise<PromiseSettledResult<FinishResult>[]>;
  /** Checks template parts on a worker thread as the intake would (template-check.ts); throws templating_error on /template/<part>. */
  checkTemplate(parts: { html?: string; text?: string }): Promise<void>;
  /** What activity shows of a large SMTP-submitted message the fast path does not read, parsed on a worker thread (raw-content.ts). */
  parseContent(raw: Buffer): Promise<RawContent>;
}

export interface SenderDomain {
  name: string;
  verified: boolean;
  /**
   * The d= domain signingKey would give (its active key is stored), when the registry knows it
   * from the same lookup: an intake that only records which domain to sign for after the commit
   * then reads neither the domain again nor the private key. Absent: ask signingKey.
   */
  signingDomain?: string;
}

export interface DomainRegistry {
  /** The domain if it belongs to the account and is linked to the channel. */
  findSendingDomain(q: { accountId: string; channelId: string; domainName: string }): Promise<SenderDomain | undefined>;
  /** The active DKIM key of the domain (undefined: send unsigned, e.g. no key yet). */
  signingKey(q: { accountId: string; domainName: string }): Promise<DkimKeyRef | undefined>;
}
