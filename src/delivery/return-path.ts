/**
 * The envelope sender of outgoing mail (RFC 5321 4.1.1.2 MAIL FROM; the receiver records it
 * as Return-Path, 4.4): where bounces and DSNs (RFC 3464) go. The one place that decides it.
 * For now `bounces@<domain of the From address>`; VERP (bounces+<id>@<return-path host>) will
 * change this function only.
 */
import { domainOf } from '../domain/address.js';
import type { MessageRecord } from '../domain/types.js';

export function envelopeSender(message: Pick<MessageRecord, 'id' | 'from'>): string {
  return `bounces@${domainOf(message.from.email)}`;
}
