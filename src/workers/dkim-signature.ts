/**
 * Makes one DKIM-Signature header field (RFC 6376) with an already parsed private key.
 *
 * mailauth's dkimSign takes the key only as PEM/DER text and parses it for every signature, which
 * under OpenSSL 3 costs as much as the RSA-2048 signature itself and 12× an ed25519 one
 * (bench/RESULTS.md, DKIM section). So the steps of its DkimSigner are done here with mailauth's
 * own building blocks (header/body split, body hash, header canonicalization, field formatting)
 * and the KeyObject the caller passes in: the output is byte for byte what mailauth's dkimSign
 * writes for the same message, key, time and header list (test/unit/dkim-signature.test.ts
 * compares them), and nothing of mailauth is replaced or patched.
 */
import crypto, { type KeyObject } from 'node:crypto';
import { dkimBody, type BodyHasher } from 'mailauth/lib/dkim/body/index.js';
import { generateCanonicalizedHeader } from 'mailauth/lib/dkim/header/index.js';
import { MessageParser } from 'mailauth/lib/dkim/message-parser.js';
import tools, { type ParsedHeaders } from 'mailauth/lib/tools.js';
import { canonicalHeader, plainTags, signatureField, type SignatureTags } from './dkim-fields.js';

export type DkimAlgorithm = 'rsa' | 'ed25519';

export interface DkimSignatureInput {
  /** The complete message; bare LF line ends are read as CRLF, as mailauth does. */
  message: Buffer;
  /** The d= tag. */
  domain: string;
  /** The s= tag. */
  selector: string;
  algorithm: DkimAlgorithm;
  key: KeyObject;
  /** Colon-separated names of the fields to sign, where present. */
  headerList: string;
  /**
   * Names of headerList listed in h= once more than the message has them (RFC 6376 8.15), so a
   * copy added after signing breaks the signature; `oversignPresent` only when the message has
   * the field. Neither: h= as mailauth's dkimSign writes it.
   */
  oversign?: readonly string[];
  oversignPresent?: readonly string[];
  /** The t= tag; whole seconds (RFC 6376 3.5). */
  signTime: Date;
}

// relaxed/relaxed survives the whitespace changes and re-folding relays do (RFC 6376 3.4).
const CANONICALIZATION = 'relaxed/relaxed';

/** A message's parsed header fields and relaxed body hash: what every signature of it is made from. */
export interface HashedMessage {
  headers: ParsedHeaders;
  bodyHash: string;
}

/**
 * Parses the message and hashes its body once, so that several signatures of it (an ed25519 key
 * and its RSA companion, RFC 8463 3: same canonicalization, same body hash) cost one pass; null
 * when the message has no header/body separator (mailauth signs nothing then either).
 */
export async function hashForSigning(message: Buffer): Promise<HashedMessage | null> {
  if (!hasBareLf(message)) return hashCrlfMessage(message);
  const split = new HeaderAndBodyHash();
  await tools.writeToStream(split, message);
  return split.result;
}

/**
 * The same result for a message whose every line ends in CRLF (what the composer writes and
 * what SMTP carries, RFC 5321 2.3.8), without mailauth's stream: its parser looks at the header
 * one byte at a time in JS and copies every bare-LF line, about 30–45 µs of a 2 KB message's
 * signature and more for large ones. With CRLF only, its header end (the first LF that ends an
 * empty line) is the first CRLF CRLF, and the body is hashed in one update instead of chunks
 * (the hasher is a stream hasher: the digest does not depend on the chunking).
 */
function hashCrlfMessage(message: Buffer): HashedMessage | null {
  const end = message.indexOf(HEADER_END);
  if (end === -1) return null;
  const headers = tools.parseHeaders(message.subarray(0, end + HEADER_END.length));
  const body = message.subarray(end + HEADER_END.length);
  if (isRelaxed(body)) return { headers, bodyHash: relaxedBodyHash(body) };
  const hasher = dkimBody('relaxed', 'sha256', false);
  hasher.update(body);
  return { headers, bodyHash: hasher.digest('base64') };
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

/**
 * True when relaxed body canonicalization (RFC 6376 3.4.4) changes no line of this CRLF-only
 * body: no tab, no run of spaces, no space before a line end; mailauth's hasher then changes
 * nothing inside it either (it fixes a line only for these). What the composer writes is mostly
 * such a body (QP encodes a space before a line end), and native searches decide it.
 */
function isRelaxed(body: Buffer): boolean {
  return body.indexOf(0x09) === -1 && body.indexOf('  ') === -1 && body.indexOf(' \r\n') === -1;
}

/**
 * The relaxed body hash of such a body in one native pass: the body without the CR and LF bytes
 * it ends with (the empty lines at its end, RFC 6376 3.4.4 b.1, and the last line's CRLF, added
 * back), as mailauth's hasher drops them; nothing at all when that leaves no byte.
 */
function relaxedBodyHash(body: Buffer): string {
  let end = body.length;
  while (end > 0 && (body[end - 1] === 0x0a || body[end - 1] === 0x0d)) end--;
  const hash = crypto.createHash('sha256');
  if (end > 0) hash.update(body.subarray(0, end)).update(CRLF);
  return hash.digest('base64');
}

/** True when some LF is not preceded by CR (memchr-speed: Buffer.indexOf per LF). */
function hasBareLf(message: Buffer): boolean {
  for (let at = message.indexOf(0x0a); at !== -1; at = message.indexOf(0x0a, at + 1)) {
    if (at === 0 || message[at - 1] !== 0x0d) return true;
  }
  return false;
}

/**
 * The DKIM-Signature field of a hashed message, folded, without a trailing CRLF.
 * @throws Error when the key is not of the given algorithm.
 */
export function signHashed(hashed: HashedMessage, input: Omit<DkimSignatureInput, 'message'>): string {
  const keyType = input.key.asymmetricKeyType;
  if (keyType !== input.algorithm) {
    // mailauth's wording, so callers and logs see the same reason as before.
    throw new Error(`Invalid key type: "${keyType}" (expecting "${input.algorithm}")`);
  }
  return signFields(input, hashed.headers, hashed.bodyHash);
}

/**
 * The DKIM-Signature field, folded, without a trailing CRLF; null when the message has no
 * header/body separator.
 * @throws Error when the key is not of the given algorithm.
 */
export async function dkimSignature(input: DkimSignatureInput): Promise<string | null> {
  const hashed = await hashForSigning(input.message);
  return hashed && signHashed(hashed, input);
}

/** RFC 6376 3.7 and 5.5: hash the signed fields plus the new field with an empty b=, sign. */
function signFields(input: Omit<DkimSignatureInput, 'message'>, headers: ParsedHeaders, bodyHash: string): string {
  const algorithm = `${input.algorithm}-sha256`;
  const signingLines = oversigned(tools.getSigningHeaderLines(headers.parsed, input.headerList), headers, input);
  const tags: SignatureTags = {
    a: algorithm,
    c: CANONICALIZATION,
    d: input.domain,
    s: input.selector,
    h: signingLines.keys,
    t: Math.floor(input.signTime.getTime() / 1000),
    bh: bodyHash,
  };
  // ASCII d= and s= (nearly every key): dkim-fields.ts, the same bytes in one formatting pass.
  if (plainTags(tags)) return signatureField(tags, signData(input, canonicalHeader(signingLines, tags)));
  const { canonicalizedHeader, dkimHeaderOpts } = generateCanonicalizedHeader('DKIM', signingLines, {
    signingDomain: input.domain,
    selector: input.selector,
    algorithm,
    canonicalization: CANONICALIZATION,
    bodyHash,
    signTime: input.signTime,
  });
  return tools.formatSignatureHeaderLine('DKIM', { ...dkimHeaderOpts, b: signData(input, canonicalizedHeader) }, true);
}

/** The b= value: RSA (RFC 8301) is PKCS#1 v1.5 over SHA-256 of the data; Ed25519 (RFC 8463 3) is PureEdDSA over the SHA-256 digest of the data, so the digest is what gets signed, without a hash of its own. */
function signData(input: Pick<DkimSignatureInput, 'algorithm' | 'key'>, data: Buffer): string {
  const signature =
    input.algorithm === 'rsa'
      ? crypto.sign('sha256', data, input.key)
      : crypto.sign(null, crypto.createHash('sha256').update(data).digest(), input.key);
  return signature.toString('base64');
}

/**
 * RFC 6376 5.4.2: a name in h= past the last occurrence of its field is hashed as the null
 * string, so appending one more name for each field to protect changes nothing in the signed
 * data today, but makes a verifier, which takes fields bottom-up, hash an added copy too.
 */
function oversigned(lines: SigningLines, headers: ParsedHeaders, input: Omit<DkimSignatureInput, 'message'>): SigningLines {
  const present = new Set(headers.parsed.map((h) => h.key));
  const extra = [...(input.oversign ?? []), ...(input.oversignPresent ?? []).filter((name) => present.has(name.toLowerCase()))];
  if (extra.length === 0) return lines;
  return { ...lines, keys: [lines.keys, ...extra].filter((k) => k !== '').join(': ') };
}

type SigningLines = ReturnType<typeof tools.getSigningHeaderLines>;

/**
 * mailauth's MessageParser finds the end of the header; this keeps the parsed fields and hashes
 * the body with relaxed canonicalization (RFC 6376 3.4.4) as it streams past.
 */
class HeaderAndBodyHash extends MessageParser {
  result: HashedMessage | null = null;
  private hasher: BodyHasher | null = null;

  override async messageHeaders(): Promise<void> {
    this.hasher = dkimBody('relaxed', 'sha256', false);
  }

  override async nextChunk(chunk: Buffer): Promise<void> {
    this.hasher?.update(chunk);
  }

  // Called when the input ends. Without an empty line there was no header end: like mailauth,
  // no signature (the parser reads such a message as all header after this call).
  override async finalChunk(): Promise<void> {
    if (!this.headers || !this.hasher) return;
    this.result = { headers: this.headers, bodyHash: this.hasher.digest('base64') };
  }
}
