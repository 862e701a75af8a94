/**
 * The worker tasks over received mail (issue 33), off the main thread where the HTTP API, the
 * SMTP listeners and the delivery scheduler run: a message of up to inbound.maxMessageSize (a
 * 25 MB attachment, 10,000 parts) read by mailparser, its attachments in base64 and its JSON
 * serialized held that thread for up to 0.6 s (post-attempt.ts has the numbers).
 *
 * Plain data in and out. The raw bytes come in handed over (pool.ts), and the answers' bytes go
 * back the same way (worker.ts): a JSON body of 34 MB is neither copied nor encoded again there.
 */
import { asBuffer } from '../domain/bytes.js';
import { attachmentAt } from '../inbound/attachment-at.js';
import { inboundPayload } from '../inbound/payload.js';
import type { AuthVerdicts } from '../inbound/verify.js';
import { ownBytes } from './bytes.js';

export interface InboundPayloadTaskInput {
  id: string;
  routeId: string;
  /** ISO 8601. */
  receivedAt: string;
  envelope: { mailFrom: string; rcptTo: string[] };
  /** The message as received. */
  raw: Uint8Array;
  auth: AuthVerdicts;
  mailboxHash: string | null;
  /** Attachments up to this many bytes (decoded) are inlined; larger ones get a link. */
  attachmentInlineMax: number;
  /** The link of an attachment too large to inline is this followed by its index. */
  attachmentUrlPrefix: string;
}

export interface InboundPayloadTaskOutput {
  /** The payload's JSON in UTF-8: the exact bytes POSTed and signed. */
  body: Uint8Array<ArrayBuffer>;
}

export interface InboundAttachmentTaskInput {
  raw: Uint8Array;
  index: number;
}

/** The attachment as its link serves it; null when the message has none at that index. */
export type InboundAttachmentTaskOutput = { filename: string | null; contentType: string; content: Uint8Array<ArrayBuffer> } | null;

/** A received message's JSON for its route (inbound/payload.ts), serialized. */
export async function inboundPayloadBody(input: InboundPayloadTaskInput): Promise<InboundPayloadTaskOutput> {
  const payload = await inboundPayload({
    id: input.id,
    routeId: input.routeId,
    receivedAt: new Date(input.receivedAt),
    envelope: input.envelope,
    raw: asBuffer(input.raw),
    auth: input.auth,
    mailboxHash: input.mailboxHash,
    attachmentInlineMax: input.attachmentInlineMax,
    attachmentUrl: (index) => `${input.attachmentUrlPrefix}${index}`,
  });
  return { body: ownBytes(Buffer.from(JSON.stringify(payload), 'utf8')) };
}

/** The attachment at `index` of a received message's payload (inbound/attachment-at.ts). */
export async function inboundAttachment(input: InboundAttachmentTaskInput): Promise<InboundAttachmentTaskOutput> {
  const found = await attachmentAt(asBuffer(input.raw), input.index);
  return found && { ...found, content: ownBytes(found.content) };
}
