/**
 * A TLS-RPT report as an e-mail message (RFC 8460 5.3), built with nodemailer's MailComposer:
 *
 * - Content-Type multipart/report; report-type="tlsrpt", a human-readable text/plain part first
 *   and the gzipped JSON report second, as application/tlsrpt+gzip (RFC 8460 5.1, 6.4) named
 *   `<submitter>!<policy-domain>!<begin>!<end>!<unique-id>.json.gz` (RFC 8460 5.1);
 * - the TLS-Report-Domain and TLS-Report-Submitter fields, which RFC 8460 5.3 requires;
 * - Subject "Report Domain: <policy-domain> Submitter: <submitter> Report-ID: <msg-id>"
 *   (RFC 8460 5.3's ABNF: the report id in msg-id form, which lets a receiver drop a report it
 *   got twice).
 *
 * The message goes through submission like any other (tls-rpt/mailer.ts), which checks the From
 * and signs it with the domain's DKIM key (RFC 8460 5.3: reports SHOULD be DKIM-signed).
 */
import { randomUUID } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { domainOf } from '../domain/address.js';
import { joinMessage, splitMessage } from '../domain/raw-headers.js';
import { reportFilename } from './report.js';

export interface ReportMailInput {
  /** The From address (tlsRpt.reportFrom). */
  from: string;
  /** The rua's address, already checked (mailto.ts). */
  to: string;
  /** Our host name: RFC 8460's submitter, in the Subject, the TLS-Report-Submitter field and the file name. */
  submitter: string;
  organizationName: string;
  policyDomain: string;
  reportId: string;
  /** 'YYYY-MM-DD' (UTC), the day the report covers. */
  day: string;
  gzip: Uint8Array;
  date: Date;
}

// The domain names and the report id go into header fields as they are: nothing but a domain's
// letters, digits, "-" and ".", and "_" of our report ids (service.ts), may reach them.
const HEADER_SAFE = /^[A-Za-z0-9._-]+$/;

/** RFC 8460 5.3 names the fields in this spelling; MailComposer would write "Tls-Report-Domain". */
const TLS_RPT_FIELDS = ['TLS-Report-Domain', 'TLS-Report-Submitter'];

export async function composeReportMail(m: ReportMailInput): Promise<Buffer> {
  for (const v of [m.submitter, m.policyDomain, m.reportId]) {
    if (!HEADER_SAFE.test(v)) throw new Error(`TLS-RPT mail: ${JSON.stringify(v)} cannot be written into a header field`);
  }
  const filename = reportFilename(m.submitter, m.policyDomain, m.day, m.reportId);
  const root = new MailComposer({
    from: m.from,
    to: m.to,
    subject: `Report Domain: ${m.policyDomain} Submitter: ${m.submitter} Report-ID: <${m.reportId}@${m.submitter}>`,
    messageId: `<${randomUUID()}@${domainOf(m.from)}>`,
    date: m.date,
    headers: { 'TLS-Report-Domain': m.policyDomain, 'TLS-Report-Submitter': m.submitter },
    text: humanReadable(m, filename),
    attachments: [{ content: Buffer.from(m.gzip), filename, contentType: 'application/tlsrpt+gzip', contentDisposition: 'attachment' }],
    // SMTP needs CRLF (RFC 5321 2.3.8); nothing may be read from a path or URL.
    newline: 'windows',
    disableFileAccess: true,
    disableUrlAccess: true,
  }).compile();
  // A text part and an attachment make MailComposer's root a multipart/mixed; RFC 8460 5.3 wants
  // the same two parts under multipart/report (RFC 6522), so only the root's type changes.
  root.setHeader('Content-Type', 'multipart/report; report-type="tlsrpt"');
  return withFieldNames(await root.build(), TLS_RPT_FIELDS);
}

/** The first part: what a person opening the mail reads (RFC 8460 5.3). */
function humanReadable(m: ReportMailInput, filename: string): string {
  return [
    `This is an aggregate TLS report (SMTP TLS Reporting, RFC 8460) from ${m.organizationName} (${m.submitter}).`,
    '',
    `Policy domain: ${m.policyDomain}`,
    `Period: ${m.day} 00:00:00 to 23:59:59 UTC`,
    `Report-ID: ${m.reportId}`,
    '',
    `The report is attached as ${filename} (application/tlsrpt+gzip: JSON, gzipped).`,
    '',
  ].join('\n');
}

/** Field names are case-insensitive (RFC 5322 1.2.2), but written as the RFC that defines them does. */
function withFieldNames(raw: Buffer, names: readonly string[]): Buffer {
  const msg = splitMessage(raw);
  const spelled = new Map(names.map((n) => [n.toLowerCase(), n]));
  const fields = msg.fields.map((f) => {
    const name = spelled.get(f.name.toLowerCase());
    return name ? { name, raw: name + f.raw.slice(f.name.length) } : f;
  });
  return joinMessage({ ...msg, fields });
}
