/**
 * The signature fields of a received message that verification looks at, at most a few of each.
 *
 * Every DKIM-Signature (RFC 6376 3.5) and ARC-Message-Signature (RFC 8617 4.1.2) makes the
 * verifier hash the body once per distinct canonicalization, algorithm and length (l=), and
 * look up one key. A sender picks how many there are, so without a cap a 1 MiB header block of
 * signatures over a 30 MiB body is thousands of hashes of the whole body and thousands of
 * lookups. Real mail carries one to three DKIM signatures and a short ARC chain.
 *
 * The topmost fields are kept (signers prepend theirs, RFC 6376 5.6, RFC 8617 5.1.1: the top
 * ones are the latest hops'); the rest are left out of the copy handed to the verifier, so a
 * chain longer than the cap ends as an ARC `fail` (its first instances are missing).
 */
import { BARE_LF, headerEnd, joinMessage, splitMessage } from '../domain/raw-headers.js';

/** Most DKIM-Signature fields verified per message. */
export const MAX_DKIM_SIGNATURES = 8;
/** Most fields of each ARC header name (RFC 8617 4.1) verified per message: a chain of this many hops. */
export const MAX_ARC_SETS = 8;

const CAPS = new Map<string, number>([
  ['dkim-signature', MAX_DKIM_SIGNATURES],
  ['arc-seal', MAX_ARC_SETS],
  ['arc-message-signature', MAX_ARC_SETS],
  ['arc-authentication-results', MAX_ARC_SETS],
]);

// Linear: one pass over the header block, which is at most the message.
const SIGNATURE_LINE = /^(?:dkim-signature|arc-seal|arc-message-signature|arc-authentication-results)[ \t]*:/gim;

/** The header block (up to the first empty line) as latin1 text, one char per byte. */
function headerText(raw: Buffer): string {
  const end = headerEnd(raw, BARE_LF);
  return raw.subarray(0, end < 0 ? raw.length : end).toString('latin1');
}

/** `raw`, or a copy without the signature fields past the caps when it has more. */
export function capSignatureFields(raw: Buffer): Buffer {
  const count = headerText(raw).match(SIGNATURE_LINE)?.length ?? 0;
  if (count <= MAX_DKIM_SIGNATURES) return raw;
  const message = splitMessage(raw);
  const seen = new Map<string, number>();
  const fields = message.fields.filter((field) => {
    const name = field.name.toLowerCase();
    const cap = CAPS.get(name);
    if (cap === undefined) return true;
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    return n <= cap;
  });
  return fields.length === message.fields.length ? raw : joinMessage({ ...message, fields });
}
