/**
 * One transaction per recipient (delivery/per-recipient.ts): the results joined in the job's
 * order; a failure before RCPT TO or a "slow down" ends the attempt for the recipients not tried
 * yet with the same reply; a refused RCPT or message is that recipient's own.
 */
import { describe, expect, it } from 'vitest';
import type { AttemptResult, RecipientResult } from '../../src/domain/delivery-result.js';
import { deliverPerRecipient } from '../../src/delivery/per-recipient.js';

type Reply = Omit<RecipientResult, 'recipient'>;
const DELIVERED: Reply = { outcome: 'delivered', category: 'delivered', phase: 'message', smtpCode: 250, response: '250 ok' };
const UNKNOWN: Reply = { outcome: 'bounced', bounceType: 'hard', category: 'unknown_user', phase: 'rcpt', smtpCode: 550, enhancedCode: '5.1.1', response: '550 5.1.1 unknown' };
const REFUSED_SENDER: Reply = { outcome: 'bounced', bounceType: 'hard', category: 'policy', phase: 'mail', smtpCode: 553, response: '553 sender refused' };
const SLOW_DOWN: Reply = { outcome: 'deferred', category: 'rate_limited', phase: 'data', smtpCode: 421, response: '421 slow down' };

/** A fake transaction: each recipient's scripted reply, recording who was tried. */
function script(replies: Record<string, Reply>) {
  const tried: string[] = [];
  const one = async (recipient: string): Promise<AttemptResult> => {
    tried.push(recipient);
    const r = replies[recipient];
    return { recipients: [{ recipient, ...r }], mx: `mx-${recipient}`, tls: true, smtpCode: r.smtpCode, response: r.response };
  };
  return { tried, one };
}

describe('deliverPerRecipient', () => {
  it('tries every recipient after a refused RCPT, and joins the results in order with the first session', async () => {
    const s = script({ a: UNKNOWN, b: DELIVERED, c: DELIVERED });
    const result = await deliverPerRecipient(['a', 'b', 'c'], s.one);
    expect(s.tried).toEqual(['a', 'b', 'c']);
    expect(result.recipients.map((r) => [r.recipient, r.outcome])).toEqual([['a', 'bounced'], ['b', 'delivered'], ['c', 'delivered']]);
    // The summary reply is the first delivery's, as for one transaction.
    expect(result).toMatchObject({ mx: 'mx-a', smtpCode: 250, response: '250 ok' });
  });

  it('gives a refused MAIL FROM to the recipients not tried, without trying them', async () => {
    const s = script({ a: DELIVERED, b: REFUSED_SENDER, c: DELIVERED });
    const result = await deliverPerRecipient(['a', 'b', 'c'], s.one);
    expect(s.tried).toEqual(['a', 'b']);
    expect(result.recipients.map((r) => [r.recipient, r.outcome, r.smtpCode])).toEqual([['a', 'delivered', 250], ['b', 'bounced', 553], ['c', 'bounced', 553]]);
  });

  it('stops at a "slow down" reply: the rest are deferred with it', async () => {
    const s = script({ a: SLOW_DOWN, b: DELIVERED });
    const result = await deliverPerRecipient(['a', 'b'], s.one);
    expect(s.tried).toEqual(['a']);
    expect(result.recipients.map((r) => [r.recipient, r.outcome, r.smtpCode])).toEqual([['a', 'deferred', 421], ['b', 'deferred', 421]]);
    expect(result.smtpCode).toBe(421);
  });
});
