/**
 * A received message read with mailparser, within limits, so that what a sender can make it do
 * is linear in the message and bounded:
 *  - at most `maxParts` MIME entities (mailsplit's maxChildNodes: 10,000 one-line parts would
 *    otherwise become 10,000 attachments and a text joined from 10,000 pieces);
 *  - at most `maxHeadBytes` in the header block of any entity (mailsplit's maxHeadSize; the
 *    limit MAX_HEADER_BYTES puts on every other parser of mail from outside);
 *  - at most `maxBytes` in all; HTML longer than `maxHtmlToText` is not turned into text.
 * A message past a limit, or that mailparser gives up on, is read again as its header block
 * alone, so its From, Subject and other fields still arrive, with `problem` saying why there is
 * no body. A message whose header block is past the limit has no fields either.
 */
import type { ParsedMail } from 'mailparser';
import { headerBlockEnd, MAX_HEADER_BYTES } from '../domain/raw-headers.js';

export interface ParseLimits {
  maxBytes: number;
  maxParts: number;
  maxHeadBytes: number;
  maxHtmlToText: number;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = Object.freeze({
  // A 25 MB attachment is 34 MB in base64 (RFC 2045 6.8), with room for the rest of the message.
  maxBytes: 48 * 1024 * 1024,
  maxParts: 500,
  maxHeadBytes: MAX_HEADER_BYTES,
  maxHtmlToText: 2 * 1024 * 1024,
});

export interface ParsedReceived {
  mail: ParsedMail | null;
  /** Why the body was not read (a limit, or mailparser's error); null when it was. */
  problem: string | null;
}

/** `raw` as mailparser reads it within `limits`; never rejects. */
export async function parseReceived(raw: Buffer, limits: ParseLimits = DEFAULT_PARSE_LIMITS): Promise<ParsedReceived> {
  if (raw.length > limits.maxBytes) return headersOnly(raw, limits, `the message is over ${limits.maxBytes} bytes, its body was not read`);
  try {
    return { mail: await simpleParse(raw, limits), problem: null };
  } catch (err) {
    return headersOnly(raw, limits, `the body could not be read: ${describe(err, limits)}`);
  }
}

/**
 * mailparser is imported on first use (Node keeps it loaded after): the daemon's main thread
 * loads this module whether or not inbound mail is on, and mailparser's module graph took about
 * 0.3 s of every start.
 */
async function simpleParse(raw: Buffer, limits: ParseLimits): Promise<ParsedMail> {
  const { simpleParser } = await import('mailparser');
  return simpleParser(raw, options(limits));
}

function options(limits: ParseLimits) {
  return {
    maxChildNodes: limits.maxParts,
    maxHeadSize: limits.maxHeadBytes,
    maxHtmlLengthToParse: limits.maxHtmlToText,
    // The payload carries text and HTML as sent, and attachments with their Content-ID: no
    // HTML made from the text, no links marked up, no cid: images inlined as data: URLs.
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
    keepCidLinks: true,
  };
}

/** mailparser's reason; for a limit (mailsplit's EMAXLEN), with the limits. */
function describe(err: unknown, limits: ParseLimits): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return code === 'EMAXLEN' ? `${message} (at most ${limits.maxParts} parts, ${limits.maxHeadBytes} header bytes each)` : message;
}

async function headersOnly(raw: Buffer, limits: ParseLimits, problem: string): Promise<ParsedReceived> {
  const end = headerBlockEnd(raw, limits.maxHeadBytes);
  if (end < 0) return { mail: null, problem: `${problem}; its header block is over ${limits.maxHeadBytes} bytes` };
  try {
    const head = Buffer.concat([raw.subarray(0, end), Buffer.from('\r\n\r\n')]);
    return { mail: await simpleParse(head, limits), problem };
  } catch (err) {
    return { mail: null, problem: `${problem}; its header block could not be read either: ${describe(err, limits)}` };
  }
}
