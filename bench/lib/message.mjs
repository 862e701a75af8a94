/**
 * The one message every intake benchmark sends: a receipt with a text and an html part
 * (multipart/alternative, about 2 KB once composed). The HTTP benchmark posts it as JSON; the
 * SMTP benchmarks send the MIME that postrider composes from that JSON (built here with the
 * daemon's own composer from dist), so both servers receive the same bytes; smtp-source gets a
 * body of the same length.
 */
import { randomUUID } from 'node:crypto';
import { WorkerTasks } from '../../dist/workers/tasks.js';

export const SENDER_DOMAIN = 'shop-bench-postrider.com';
export const FROM = { email: `receipts@${SENDER_DOMAIN}`, name: 'Bench Shop' };
export const TO = { email: 'ann@d0.sink-bench-postrider.com', name: 'Ann Example' };

/** The receipt's lines: the send benchmarks' message, and what the inbound benchmark's reply quotes. */
export const RECEIPT_LINES = [
  'Thank you for your order 10234 placed on 2 March.',
  'Items: 1 x Walnut desk organiser (39.00), 2 x Linen notebook A5 (2 x 12.50).',
  'Subtotal 64.00, shipping 4.90, VAT 13.78, total 82.68 EUR, paid by card ending 4242.',
  'Your parcel leaves our warehouse within two working days; we will send the tracking link',
  'as soon as the carrier has it. Delivery address: Ann Example, 12 Harbour Street, 1010 Town.',
  'Questions? Answer this message or call us on weekdays from 9:00 to 17:00.',
  'Returns are free within 30 days: keep this receipt, it is your proof of purchase.',
];
export const TEXT = RECEIPT_LINES.join('\n') + '\n';
export const HTML = `<html><body style="font-family:sans-serif"><h1>Thank you for your order</h1>${RECEIPT_LINES.map((l) => `<p>${l}</p>`).join('')}</body></html>`;
export const SUBJECT = 'Your receipt for order 10234';

/** Body of POST /send/transactional. */
export function sendPayload(to = TO) {
  return { from: FROM, to: [to], subject: SUBJECT, text: TEXT, html: HTML, tags: ['receipt'] };
}

/** autocannon's options for `amount` POST /send/transactional of sendPayload() over `connections`, to postrider `p` (bench/lib/postrider.mjs). */
export function sendLoad(p, channelId, { amount, connections }) {
  return {
    url: `${p.url}/send/transactional`,
    method: 'POST',
    connections,
    amount,
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-service-channel-id': channelId },
    body: JSON.stringify(sendPayload()),
  };
}

/** The message as postrider composes it (unsigned), CRLF line ends. */
export async function composedMessage(to = TO) {
  const out = await new WorkerTasks().buildMessage({
    content: { subject: SUBJECT, text: TEXT, html: HTML },
    compose: { from: FROM, to: [to], cc: [], attachments: [], headers: {}, messageId: `<${randomUUID()}@${SENDER_DOMAIN}>`, date: new Date().toUTCString() },
  });
  return Buffer.from(out.raw);
}
