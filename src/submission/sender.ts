/** The sender side of a send: may this channel send from this address, and with which key. */
import { domainOf, normalizeEmail } from '../domain/address.js';
import { AppError, type FieldErrorList } from '../domain/errors.js';
import type { Channel } from '../domain/types.js';
import type { DkimKeyRef, SenderDomain } from './ports.js';
import type { SubmissionDeps } from './deps.js';

/**
 * The from domain must be registered in the account and linked to the channel (else 422 on
 * /from/email); on live channels it must also be verified (403 domain_unverified), because
 * unverified mail would fail DKIM/SPF at the receiver and hurt the domain's reputation.
 */
async function sendingDomain(deps: SubmissionDeps, q: { accountId: string; channel: Channel; from: string }): Promise<SenderDomain> {
  const domainName = domainOf(q.from);
  const domain = await deps.domains.findSendingDomain({ accountId: q.accountId, channelId: q.channel.id, domainName });
  if (!domain) {
    throw new AppError('validation_failed', `The domain ${domainName} is not registered for this channel`, {
      errors: { '/from/email': [{ code: 'domain_not_linked', message: `${domainName} must be a domain of the account linked to the channel` }] },
    });
  }
  if (q.channel.deliveryType === 'live' && !domain.verified) {
    throw new AppError('domain_unverified', `The domain ${domainName} is not verified; publish its DNS records and call POST /domains/{id}/verify`);
  }
  return domain;
}

/**
 * The sender domain's problem as a field error on /from/email, for a 422 that has other field
 * errors too (issue 30: a too long subject and an unlinked domain came back one at a time).
 * Not linked is a field error on its own as well. Not verified is answered alone as 403
 * domain_unverified (DESIGN.md pairs the code with 403, spec section 7 names it a service
 * error): it joins the list only beside other field errors, so that the request that fails
 * anyway names every problem at once, while a request whose only problem it is keeps its 403.
 * `from` must be a normalized address.
 */
export async function senderFieldError(deps: SubmissionDeps, q: { accountId: string; channel: Channel; from: string }): Promise<{ code: string; message: string } | null> {
  const domainName = domainOf(q.from);
  const domain = await deps.domains.findSendingDomain({ accountId: q.accountId, channelId: q.channel.id, domainName });
  if (!domain) return { code: 'domain_not_linked', message: `${domainName} must be a domain of the account linked to the channel` };
  if (q.channel.deliveryType === 'live' && !domain.verified) {
    return { code: 'domain_unverified', message: `${domainName} is not verified; publish its DNS records and call POST /domains/{id}/verify` };
  }
  return null;
}

/** Adds senderFieldError's problem to `errors` when they hold others (see there). */
export async function addSenderFieldError(deps: SubmissionDeps, q: { accountId: string; channel: Channel; from: string }, errors: FieldErrorList, pointer = '/from/email'): Promise<void> {
  if (errors.size === 0) return; // alone, the domain's problem is answered by sendingDomain
  const problem = await senderFieldError(deps, q);
  if (problem) errors.add(pointer, problem.code, problem.message);
}

/**
 * addSenderFieldError for a body that failed its schema, whose `from` is not known to be an
 * address: nothing is added when `from.email` is no string or no valid address (the address
 * check reports that itself).
 */
export async function addSenderFieldErrorOf(deps: SubmissionDeps, q: { accountId: string; channel: Channel; from: unknown }, errors: FieldErrorList): Promise<void> {
  const email = (q.from as { email?: unknown } | null | undefined)?.email;
  if (typeof email !== 'string') return;
  const r = normalizeEmail(email);
  if ('problem' in r) return;
  await addSenderFieldError(deps, { accountId: q.accountId, channel: q.channel, from: r.email }, errors);
}

/** The checks of sendingDomain; returns the DKIM key to sign with. */
export async function senderKey(deps: SubmissionDeps, q: { accountId: string; channel: Channel; from: string }): Promise<DkimKeyRef | undefined> {
  await sendingDomain(deps, q);
  return deps.domains.signingKey({ accountId: q.accountId, domainName: domainOf(q.from) });
}

/**
 * The checks of sendingDomain; returns the d= domain the message will be signed for after the
 * commit (the key itself is read when signing), from the same lookup when the registry gives it.
 */
export async function senderSigningDomain(deps: SubmissionDeps, q: { accountId: string; channel: Channel; from: string }): Promise<string | undefined> {
  const domain = await sendingDomain(deps, q);
  if ('signingDomain' in domain) return domain.signingDomain;
  return (await deps.domains.signingKey({ accountId: q.accountId, domainName: domainOf(q.from) }))?.domain;
}

/**
 * Sandbox channels simulate outcomes. Recipients at this reserved domain (RFC 2606 .invalid,
 * so never a real mailbox) are simulated as hard bounces; every other recipient as delivered.
 */
export const SANDBOX_BOUNCE_DOMAIN = 'bounce.postrider.invalid';

export function simulatedBounces(recipients: string[]): string[] {
  return recipients.filter((r) => domainOf(r) === SANDBOX_BOUNCE_DOMAIN);
}
