/**
 * Delivery status notifications (RFC 3464) as bounces: each per-recipient block whose Action is
 * "failed" (2.3.3) is a bounce of that Final-Recipient (2.3.2). Hard or soft comes from the same
 * rules as synchronous replies (domain/bounce-rules.ts), applied to the Status (2.3.4, an RFC
 * 3463 code) and the Diagnostic-Code (2.3.6, "smtp; 550 5.1.1 ..."). "delayed", "delivered",
 * "relayed" and "expanded" blocks are informational and ignored.
 */
import type { BounceCategory } from '../domain/delivery-outcome.js';
import { classifyReply, parseReply } from '../domain/smtp-reply.js';
import { addressOf, fieldBlocks, type Report } from './report.js';

export interface DsnBounce {
  recipient: string;
  hard: boolean;
  category: BounceCategory;
  status?: string;
  smtpCode?: number;
  diagnosticCode?: string;
  reportingMta?: string;
}

export function dsnBounces(report: Report): DsnBounce[] {
  const part = report.parts.find((p) => p.type === 'message/delivery-status' || p.type === 'message/global-delivery-status');
  if (!part) return [];
  const [perMessage, ...perRecipient] = fieldBlocks(part.body.toString('utf8'));
  const reportingMta = perMessage?.['reporting-mta']?.replace(/^dns;\s*/i, '');
  const out: DsnBounce[] = [];
  for (const block of perRecipient) {
    if ((block.action ?? '').toLowerCase().split(/\s/)[0] !== 'failed') continue;
    const recipient = addressOf(block['final-recipient']) ?? addressOf(block['original-recipient']);
    if (!recipient) continue;
    const status = /^([245]\.\d{1,3}\.\d{1,3})/.exec(block.status ?? '')?.[1];
    const diagnostic = block['diagnostic-code']?.replace(/^smtp;\s*/i, '');
    const reply = diagnostic ? parseReply(diagnostic) : { text: '' };
    // The Status field is the DSN's own statement; the diagnostic's enhanced code is the remote's.
    const c = classifyReply({ code: reply.code, enhancedCode: status ?? reply.enhancedCode, text: reply.text, phase: 'rcpt' });
    out.push({
      recipient,
      // The reporting MTA gave up: a "deferred" classification (mailbox full, 4.x.x) is a soft bounce.
      hard: c.outcome === 'bounced' && c.bounceType === 'hard',
      category: c.category,
      status,
      smtpCode: reply.code,
      diagnosticCode: diagnostic,
      reportingMta,
    });
  }
  return out;
}
