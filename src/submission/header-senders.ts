/**
 * The originator fields of a message submitted with its own header block (SMTP), checked
 * before we sign it with the domain's DKIM key: what recipients see and what DMARC aligns on
 * (RFC 7489 3.1) must be an address the channel may send from. RFC 5322 3.6 allows exactly one
 * From field and at most one Sender field; each is parsed strictly (mailbox-list.ts) and every
 * address in them is checked, not only the first; a From with several addresses needs a Sender
 * (RFC 5322 3.6.2). The obsolete form with white space before the colon ("From :", RFC 5322
 * 4.5) is refused, as mail programs disagree on whether it is a From field at all.
 */
import libmime from 'libmime';
import { normalizeEmail, type Address } from '../domain/address.js';
import { AppError } from '../domain/errors.js';
import { unfoldedUtf8Value, type SplitMessage } from '../domain/raw-headers.js';
import type { Channel } from '../domain/types.js';
import { parseMailboxList } from './mailbox-list.js';
import { senderSigningDomain } from './sender.js';
import type { SubmissionDeps } from './deps.js';

export interface HeaderSenders {
  /** The first From address: the message's sender in activity and webhooks. */
  from: Address;
  /**
   * The d= domain the message will be signed for (the first From address's domain, aligned with
   * From), when it has a stored key; the key itself is read when signing, after the commit.
   */
  signingDomain: string | undefined;
}

export async function checkHeaderSenders(deps: SubmissionDeps, q: { accountId: string; channel: Channel; msg: SplitMessage }): Promise<HeaderSenders> {
  const from = originatorField(q.msg, 'From');
  if (from.length !== 1) throw new AppError('validation_failed', `The message must have exactly one From header (RFC 5322 3.6), it has ${from.length}`);
  const sender = originatorField(q.msg, 'Sender');
  if (sender.length > 1) throw new AppError('validation_failed', `The message may have at most one Sender header (RFC 5322 3.6), it has ${sender.length}`);
  const fromList = addresses('From', from[0]);
  const senderList = sender.length ? addresses('Sender', sender[0]) : [];
  if (senderList.length > 1) throw new AppError('validation_failed', 'The Sender header must name exactly one address (RFC 5322 3.6.2)');
  if (fromList.length > 1 && senderList.length === 0) {
    throw new AppError('validation_failed', 'A From header with more than one address needs a Sender header (RFC 5322 3.6.2)');
  }
  // One address after the other, as before the lookups were asynchronous: the first refused
  // address is the one the reply names.
  const signingDomains: Array<string | undefined> = [];
  for (const [i, a] of [...fromList, ...senderList].entries()) {
    signingDomains.push(await allowedSender(deps, { accountId: q.accountId, channel: q.channel, email: a.email, field: i < fromList.length ? 'From' : 'Sender' }));
  }
  return { from: fromList[0], signingDomain: signingDomains[0] };
}

/**
 * The domain of `email` must be one the channel may send from (sender.ts: linked, and verified
 * on live channels). Refused as `forbidden` (SMTP 550 5.7.1, the security subject of RFC 3463),
 * not as a malformed request: the message is well formed, the sender is not ours. Returns the
 * d= domain its mail is signed for, without reading the private key (that is the signer's job).
 */
export async function allowedSender(deps: SubmissionDeps, q: { accountId: string; channel: Channel; email: string; field: string }): Promise<string | undefined> {
  try {
    return await senderSigningDomain(deps, { accountId: q.accountId, channel: q.channel, from: q.email });
  } catch (err) {
    if (err instanceof AppError && err.code === 'validation_failed') {
      throw new AppError('forbidden', `${q.field} ${q.email}: the domain is not one this channel may send from`);
    }
    throw err;
  }
}

/** Unfolded values of every field with this name (any case); refuses the obsolete "Name :" form. */
function originatorField(msg: SplitMessage, name: string): string[] {
  const fields = msg.fields.filter((f) => f.name.toLowerCase() === name.toLowerCase());
  for (const f of fields) {
    if (/^[^:]*[ \t]:/.test(f.raw)) throw new AppError('validation_failed', `${name} header: white space before the colon is obsolete syntax and not accepted`);
  }
  // Header bytes were read as latin1; UTF-8 addresses and names (RFC 6532) are decoded here.
  return fields.map(unfoldedUtf8Value);
}

function addresses(field: string, value: string): Address[] {
  const list = parseMailboxList(value);
  if ('problem' in list) throw new AppError('validation_failed', `${field} header ${list.problem}`);
  return list.map((m) => {
    const n = normalizeEmail(m.address);
    if ('problem' in n) throw new AppError('validation_failed', `${field} header: ${m.address.slice(0, 100)} ${n.problem.message}`);
    const name = m.name ? libmime.decodeWords(m.name).trim() : '';
    return name ? { email: n.email, name } : { email: n.email };
  });
}
