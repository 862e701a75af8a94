/**
 * The envelope sender of outgoing mail (RFC 5321 4.1.1.2 MAIL FROM; the receiver records it
 * as Return-Path, 4.4): where bounces and DSNs (RFC 3464) go. The one place that decides it.
 *
 * `bounces+<messageId>-<mac>@<label>.<domain>`, one per recipient (domain/verp.ts): the host is
 * the return-path domain the domain API asks the operator to publish (MX to this daemon, SPF
 * authorizing it), so bounces come back here and SPF aligns with the MAIL FROM domain (RFC 7208
 * 2.4). The local part names the message and, through a MAC only this daemon can make, the one
 * recipient whose copy carried it, so an asynchronous DSN or a feedback report maps to its
 * message and recipient even when the reporting MTA mangles the original headers or names a
 * forwarded address, and one recipient cannot make a report about another. Each transaction
 * therefore carries one recipient (delivery/per-recipient.ts).
 */
import { domainOf } from '../domain/address.js';
import { returnPathHost } from '../domain/return-path.js';
import type { MessageRecord } from '../domain/types.js';
import { verpLocalPart } from '../domain/verp.js';

export function envelopeSender(message: Pick<MessageRecord, 'id' | 'from'>, recipient: string, o: { secret: Buffer; returnPathLabel: string }): string {
  return `${verpLocalPart(o.secret, message.id, recipient)}@${returnPathHost(domainOf(message.from.email), o.returnPathLabel)}`;
}
