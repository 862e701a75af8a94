/**
 * One mail transaction per recipient of a job. The bounce address is per recipient
 * (return-path.ts, domain/verp.ts) and a transaction has one MAIL FROM (RFC 5321 3.3), so a job
 * for several recipients of one domain becomes as many transactions, one after the other, as
 * Postfix does for VERP mail (its queue manager hands the SMTP client one recipient per delivery
 * when the message asks for VERP). They reuse the session through the connection cache (RSET,
 * RFC 5321 4.1.1.5, pipelined where offered), and each takes its own pacer slot: each is a
 * message at the receiver. A job of one recipient (every broadcast entry, most transactional
 * mail) is one transaction as before.
 *
 * A failure before RCPT TO (DNS, connect, TLS, greeting, EHLO, MAIL FROM, or a broken session)
 * or a "slow down" reply is the receiver's answer to all of them: the recipients not tried yet get
 * that failure, as they did when they shared the transaction, instead of repeating it once
 * each. A refused RCPT, DATA or message is that recipient's own: the next one is tried.
 */
import type { AttemptResult, RecipientResult } from '../domain/delivery-result.js';
import type { DeliveryPhase } from '../domain/delivery-outcome.js';
import { slowsDown } from './smtp-results.js';

const BEFORE_RCPT: ReadonlySet<DeliveryPhase> = new Set(['dns', 'connect', 'tls', 'greeting', 'ehlo', 'mail']);

/** Runs `one` for each recipient in turn and joins the results into the job's. */
export async function deliverPerRecipient(recipients: readonly string[], one: (recipient: string) => Promise<AttemptResult>): Promise<AttemptResult> {
  if (recipients.length === 1) return one(recipients[0]);
  const results: AttemptResult[] = [];
  for (let i = 0; i < recipients.length; i++) {
    const result = await one(recipients[i]);
    results.push(result);
    const own = result.recipients[0];
    if (own && (BEFORE_RCPT.has(own.phase) || slowsDown(result))) {
      results.push(sameFailure(result, own, recipients.slice(i + 1)));
      break;
    }
  }
  return joined(results);
}

/** The recipients not tried get the reply that stopped the attempt. */
function sameFailure(result: AttemptResult, own: RecipientResult, rest: readonly string[]): AttemptResult {
  return { ...result, recipients: rest.map((recipient) => ({ ...own, recipient })) };
}

/**
 * The job's result: every recipient's in the job's order, the session of the first transaction
 * (where the attempt met the receiver first), and the summary reply picked as for one
 * transaction (smtp-results.ts summarize): the first delivery, else the first deferral, else the
 * first failure.
 */
function joined(results: readonly AttemptResult[]): AttemptResult {
  const recipients = results.flatMap((r) => r.recipients);
  const lead = recipients.find((r) => r.outcome === 'delivered') ?? recipients.find((r) => r.outcome === 'deferred') ?? recipients[0];
  return { ...results[0], recipients, smtpCode: lead?.smtpCode, enhancedCode: lead?.enhancedCode, response: lead?.response ?? results[0].response };
}
