// The parts of mailauth's DKIM implementation (CommonJS, untyped) that dkim-signature.ts builds
// its signer from. Only what is used is declared, with the shapes the code really has (mailauth
// 4.13, pinned in package.json).

declare module 'mailauth/lib/tools.js' {
  import type { KeyObject } from 'node:crypto';
  import type { Writable } from 'node:stream';

  /** One header field as parsed: `key` lower case, `line` the field with its folding. */
  export interface ParsedHeaderLine {
    key: string | null;
    casedKey: string | undefined;
    line: Buffer;
  }

  export interface ParsedHeaders {
    parsed: ParsedHeaderLine[];
    original: Buffer;
  }

  /** The fields to sign (bottom-up) and their names for the h= tag. */
  export interface SigningHeaderLines {
    keys: string;
    headers: ParsedHeaderLine[];
  }

  interface Tools {
    /** Writes the buffer to the stream in 64 KiB chunks and resolves when the stream finishes. */
    writeToStream(stream: Writable, input: Buffer): Promise<void>;
    /** The header section (up to and including its empty line) as MessageParser parses it. */
    parseHeaders(header: Buffer): ParsedHeaders;
    /** `fieldNames` is a colon-separated list; the fields present are taken bottom-up. */
    getSigningHeaderLines(parsedHeaders: ParsedHeaderLine[], fieldNames: string): SigningHeaderLines;
    /** `DKIM-Signature: v=1; a=...`, the tags in mailauth's order, folded when `folded`. */
    formatSignatureHeaderLine(type: 'DKIM', values: Record<string, unknown>, folded: boolean): string;
    /** A header field in relaxed form (RFC 6376 3.4.2) with the suffix appended; a string is read as binary (latin1) text. */
    formatRelaxedLine(line: Buffer | string, suffix?: string): Buffer;
    /** PEM text (or a raw 32-byte ed25519 key) to a KeyObject. */
    getPrivateKey(key: string | Buffer): KeyObject;
  }

  const tools: Tools;
  export default tools;
}

declare module 'mailauth/lib/dkim/message-parser.js' {
  import { Writable } from 'node:stream';
  import type { ParsedHeaders } from 'mailauth/lib/tools.js';

  /**
   * Splits a message written to it into its header (handed to messageHeaders once the empty line
   * is seen) and body chunks (nextChunk); bare LF line ends become CRLF on the way.
   */
  export class MessageParser extends Writable {
    headers: ParsedHeaders | false;
    messageHeaders(headers: ParsedHeaders): Promise<void>;
    nextChunk(chunk: Buffer): Promise<void>;
    finalChunk(): Promise<void>;
  }
}

declare module 'mailauth/lib/dkim/body/index.js' {
  export interface BodyHasher {
    update(chunk: Buffer): void;
    digest(encoding: 'base64'): string;
  }

  /** The body hasher for a canonicalization (`simple` or `relaxed`) and hash (`sha256`). */
  export function dkimBody(canonicalization: string, hashAlgo: string, maxBodyLength: number | false): BodyHasher;
}

declare module 'mailauth/lib/dkim/header/index.js' {
  import type { SigningHeaderLines } from 'mailauth/lib/tools.js';

  export interface CanonicalizedHeader {
    /** The signed fields and the new DKIM-Signature field with an empty b= (RFC 6376 3.7). */
    canonicalizedHeader: Buffer;
    /** The tags of the new DKIM-Signature field, without b=. */
    dkimHeaderOpts: Record<string, unknown>;
  }

  export function generateCanonicalizedHeader(
    type: 'DKIM',
    signingHeaderLines: SigningHeaderLines,
    options: {
      signingDomain: string;
      selector: string;
      algorithm: string;
      canonicalization: string;
      bodyHash: string;
      signTime?: Date;
    },
  ): CanonicalizedHeader;
}
