/**
 * The new DKIM-Signature field (RFC 6376 3.5) and the relaxed header data it signs (3.7), as
 * mailauth writes them, for a field whose d= and s= are ASCII.
 *
 * mailauth formats the field twice per signature (tools.formatSignatureHeaderLine: tag sorting,
 * punycode of d= and s=, folding): once with 73 placeholder characters in b= to canonicalize it,
 * and once with the signature. Neither pass changes anything for ASCII d= and s= (punycode keeps
 * ASCII labels), and the first is not needed at all: folding inserts line breaks only before
 * whitespace, which the relaxed form turns back into one space, and the b= value is removed
 * after canonicalization, so the unfolded field gives the same bytes. Tested against mailauth's
 * own functions on generated tags (test/unit/dkim-fields.test.ts) and, end to end, against its
 * dkimSign (dkim-signature.test.ts).
 */
import libmime from 'libmime';
import tools, { type SigningHeaderLines } from 'mailauth/lib/tools.js';

/** The tags of one DKIM-Signature field except b=. */
export interface SignatureTags {
  /** a=, e.g. rsa-sha256. */
  a: string;
  /** c=, e.g. relaxed/relaxed. */
  c: string;
  d: string;
  s: string;
  /** h=: the signed field names, `: `-separated as mailauth writes them. */
  h: string;
  /** t=: seconds since the epoch. */
  t: number;
  bh: string;
}

const PLAIN = /^[\x21-\x7e]+$/;

/** Whether these tags go out as written (d= and s= ASCII); otherwise mailauth's formatting must be used. */
export function plainTags(tags: SignatureTags): boolean {
  return PLAIN.test(tags.d) && PLAIN.test(tags.s);
}

/** The tags in mailauth's order (v a c d h i l q s t x z bh b), with its defaults v=1 and q=dns/txt. */
function tagList(tags: SignatureTags): string {
  return `DKIM-Signature: v=1; a=${tags.a}; c=${tags.c}; d=${tags.d}; h=${tags.h}; q=dns/txt; s=${tags.s}; t=${tags.t}; bh=${tags.bh}`;
}

/** The data to sign: each signed field in relaxed form, then the new field, relaxed, with an empty b= (RFC 6376 3.7). */
export function canonicalHeader(lines: SigningHeaderLines, tags: SignatureTags): Buffer {
  const chunks = lines.headers.map((h) => tools.formatRelaxedLine(h.line, '\r\n'));
  // As mailauth's relaxedHeaders: the field with a placeholder b=, relaxed, its b= value removed.
  const field = tools.formatRelaxedLine(`${tagList(tags)}; b=${'a'.repeat(73)}`).toString('binary');
  chunks.push(Buffer.from(field.replace(/([;:\s]+b=)[^;]+/, '$1'), 'binary'));
  return Buffer.concat(chunks);
}

/** The field with its signature, folded as mailauth folds it (b= in 75-character pieces, then lines of 76), without a trailing CRLF. */
export function signatureField(tags: SignatureTags, b: string): string {
  return libmime.foldLines(`${tagList(tags)}; ${`b=${b}`.replace(/.{75}/g, '$& ').trim()}`);
}
