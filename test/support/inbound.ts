/**
 * Mail to a daemon's inbound listener, as a reporting MTA sends it: raw bytes over SMTP with the
 * empty envelope sender of a report (RFC 3464 2: a DSN's MAIL FROM is <>).
 */
import nodemailer from 'nodemailer';

/** Resolves with the listener's reply to the message; rejects with its refusal. */
export async function sendToInbound(port: number, to: string, raw: string): Promise<string> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  try {
    return (await transport.sendMail({ envelope: { from: '', to: [to] }, raw })).response;
  } finally {
    transport.close();
  }
}
