/**
 * The local part of the bounce address (VERP, "variable envelope return path") that outgoing
 * mail carries in MAIL FROM (RFC 5321 4.1.1.2), one per recipient as Postfix's VERP and the
 * hosted providers do: `bounces+<messageId>-<mac>`, where mac is the first 64 bits of
 * HMAC-SHA256(secret, "b\n<messageId>\n<recipient>") in lower-case hex.
 *
 * A report (DSN, feedback report) that comes back to, or quotes, this address is tied to that
 * one recipient: only that recipient's copy carried it, and without the daemon's secret nobody
 * can make the address of another recipient from it (so recipient a cannot bounce or complain
 * about recipient b). The recipient is not written out (a report about a's copy does not
 * reveal the address to whoever reads the envelope); whoever checks a mac tries the message's
 * recipients, which are few.
 *
 * Length: "bounces+" (8) + the message id (36) + "-" (1) + 16 hex digits = 61 octets, within the
 * 64 of a local part (RFC 5321 4.5.3.1.1). Lower case only, because relays may fold the case of
 * local parts; parsing folds it too.
 *
 * Mail sent before per-recipient addresses had `bounces+<messageId>` (one address per message):
 * parseVerp still reads it (token absent), so reports about mail in flight across an upgrade keep
 * coming in; such an address ties a report to the message only.
 *
 * The MAC payload starts with "b", which neither the link tokens ("o", "c", "u") nor the
 * unsubscribe mailto ("m") use, so no token of one kind passes as another (tracking-token.ts).
 * Pure functions: the secret (store/secrets.ts trackingSecret) is passed in.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const MAC_BYTES = 8;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const VERP = new RegExp(`^bounces\\+(${UUID})(?:-([0-9a-f]{${MAC_BYTES * 2}}))?$`);

/** A parsed bounce local part: the message, and the recipient's mac when it is a per-recipient one. */
export interface Verp {
  messageId: string;
  token?: string;
}

function mac(secret: Buffer, messageId: string, recipient: string): Buffer {
  return createHmac('sha256', secret).update(`b\n${messageId}\n${recipient}`).digest().subarray(0, MAC_BYTES);
}

/** `bounces+<messageId>-<mac>`: the bounce local part of one recipient of one message. */
export function verpLocalPart(secret: Buffer, messageId: string, recipient: string): string {
  return `bounces+${messageId}-${mac(secret, messageId, recipient).toString('hex')}`;
}

/** The bounce local part in an address or local part (`<` and case tolerated), if it is one. */
export function parseVerp(address: string | undefined): Verp | undefined {
  if (!address) return undefined;
  const local = address.includes('@') ? address.slice(0, address.lastIndexOf('@')) : address;
  const m = VERP.exec(local.replace(/^</, '').toLowerCase());
  if (!m) return undefined;
  return m[2] ? { messageId: m[1], token: m[2] } : { messageId: m[1] };
}

/** The one recipient among `recipients` whose bounce address carries `token`; undefined for a forged or altered one. */
export function verpRecipient(secret: Buffer, messageId: string, token: string, recipients: readonly string[]): string | undefined {
  const given = Buffer.from(token, 'hex');
  if (given.length !== MAC_BYTES) return undefined;
  return recipients.find((r) => timingSafeEqual(given, mac(secret, messageId, r)));
}
