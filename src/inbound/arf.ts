/**
 * Feedback reports (RFC 5965 ARF, as sent by mailbox providers' feedback loops): the
 * machine-readable part message/feedback-report (3.1) names the Feedback-Type, and usually the
 * Original-Mail-From and Original-Rcpt-To of the reported message (3.2, optional); the third part
 * holds the original message or its headers (2(e)).
 */
import { addressOf, fieldBlocks, type Report } from './report.js';

export interface FeedbackReport {
  /** abuse, fraud, virus, other, not-spam (RFC 5965 7.3). */
  feedbackType: string;
  userAgent?: string;
  originalMailFrom?: string;
  originalRcptTo?: string;
  sourceIp?: string;
  arrivalDate?: string;
  reportedDomain?: string;
}

export function feedbackReport(report: Report): FeedbackReport | null {
  const part = report.parts.find((p) => p.type === 'message/feedback-report');
  if (!part) return null;
  const f = fieldBlocks(part.body.toString('utf8'))[0] ?? {};
  if (!f['feedback-type']) return null;
  return {
    feedbackType: f['feedback-type'].toLowerCase(),
    userAgent: f['user-agent'],
    originalMailFrom: addressOf(f['original-mail-from']),
    originalRcptTo: addressOf(f['original-rcpt-to']),
    sourceIp: f['source-ip'],
    arrivalDate: f['arrival-date'] ?? f['received-date'],
    reportedDomain: f['reported-domain'],
  };
}
