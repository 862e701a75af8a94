/**
 * The envelope sender of outgoing mail (RFC 5321 4.1.1.2 MAIL FROM; the receiver records it
 * as Return-Path, 4.4): where bounces and DSNs (RFC 3464) go. The one place that decides it.
 *
 * `bounces+<messageId>@<label>.<domain>`: the host is the return-path domain the domain API
 * asks the operator to publish (MX to this daemon, SPF authorizing it), so bounces come back
 * here and SPF aligns with the MAIL FROM domain (RFC 7208 2.4). The local part carries the
 * message id (VERP-style) so an asynchronous DSN maps to its message even when the reporting
 * MTA mangles the original headers; the recipient comes from the DSN's Final-Recipient field.
 */
import { domainOf } from '../domain/address.js';
import { returnPathHost } from '../domain/return-path.js';
import type { MessageRecord } from '../domain/types.js';

export function envelopeSender(message: Pick<MessageRecord, 'id' | 'from'>, returnPathLabel: string): string {
  return `bounces+${message.id}@${returnPathHost(domainOf(message.from.email), returnPathLabel)}`;
}
