/**
 * One attachment of a received message, as its link serves it (the `url` a payload carries in
 * place of an attachment too large to inline): the raw message read with the payload's limits
 * (parse-received.ts), so an index names the attachment the payload listed at that index. Run
 * in the worker pool (workers/inbound-tasks.ts): a 25 MB attachment is a parse of 34 MB.
 */
import { DEFAULT_PARSE_LIMITS, parseReceived, type ParseLimits } from './parse-received.js';
import { safeFilename } from './payload-fields.js';

/** One attachment as the link serves it. */
export interface InboundAttachment {
  filename: string | null;
  contentType: string;
  content: Buffer;
}

/** The attachment at `index` of the payload's `attachments`, or null when there is none there. */
export async function attachmentAt(raw: Buffer, index: number, limits: ParseLimits = DEFAULT_PARSE_LIMITS): Promise<InboundAttachment | null> {
  const { mail } = await parseReceived(raw, limits);
  const found = mail?.attachments[index];
  if (!found) return null;
  return { filename: safeFilename(found.filename), contentType: mediaType(found.contentType), content: found.content };
}

/** RFC 6838 4.2: a sender's type as a header value only when it is `type/subtype` of restricted names. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;

function mediaType(value: string | undefined): string {
  return value !== undefined && MEDIA_TYPE.test(value) ? value.toLowerCase() : 'application/octet-stream';
}
