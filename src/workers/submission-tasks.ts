/**
 * The pool's part of reading an SMTP-submitted message for activity (submission/raw-content.ts):
 * mailparser's full parse of a message the fast path does not read (attachments, nesting, other
 * charsets). Above PARSE_HERE_MAX_BYTES it runs here, off the main thread: every attachment is
 * decoded to learn its size, and for an 18 MB attachment that held the main thread (the HTTP API,
 * the listeners, the scheduler) for 430 ms before the 250 (bench/RESULTS.md, large messages).
 */
import { asBuffer } from '../domain/bytes.js';
import { parsedContent, type RawContent } from '../submission/raw-content.js';

export interface RawContentTaskInput {
  /** A copy of the message, handed to the thread (the caller keeps its own). */
  raw: Uint8Array;
}

export type RawContentTaskOutput = RawContent;

export function rawContentOf(input: RawContentTaskInput): Promise<RawContentTaskOutput> {
  return parsedContent(asBuffer(input.raw));
}
