/**
 * Account and recipient policy applied to every send, from any ingress (DESIGN.md, spec 7):
 * suspended accounts may not send, pending accounts have a free quota, the operator's deny list
 * forbids recipients, and suppressed recipients are dropped.
 */
import { domainOf } from '../domain/address.js';
import { AppError } from '../domain/errors.js';
import type { Account, MailType } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';

export async function sendingAccount(store: Pick<StorePort, 'accounts'>, accountId: string): Promise<Account> {
  return maySend(await store.accounts.get(accountId));
}

/** The account exists and is not suspended; for checks made before the account itself is needed (SMTP MAIL FROM). */
export async function assertMaySend(store: Pick<StorePort, 'accounts'>, accountId: string): Promise<void> {
  await sendingAccount(store, accountId);
}

function maySend(account: Account | undefined): Account {
  if (!account) throw new AppError('unauthorized', 'The account of this API key no longer exists');
  if (account.state === 'suspended') throw new AppError('account_forbidden', 'The account is suspended and may not send');
  return account;
}

/** Deny-list entries are domains ("example.com" also covers sub.example.com) or full addresses. */
export function isDenied(denyList: readonly string[], email: string): boolean {
  const lower = email.toLowerCase();
  const domain = domainOf(lower);
  return denyList.some((d) => (d.includes('@') ? d === lower : domain === d || domain.endsWith('.' + d)));
}

export function checkDenyList(denyList: readonly string[], recipients: string[]): void {
  const denied = recipients.filter((r) => isDenied(denyList, r));
  if (denied.length > 0) throw new AppError('recipient_forbidden', `Recipients not allowed: ${denied.join(', ')}`);
}

/** Splits envelope recipients into those to send to and those suppressed, in their order. */
export async function splitSuppressed(store: Pick<StorePort, 'suppressions'>, channelId: string, mailType: MailType, recipients: string[]) {
  const send: string[] = [];
  const suppressed: string[] = [];
  for (const r of recipients) ((await store.suppressions.is(channelId, mailType, r)) ? suppressed : send).push(r);
  return { send, suppressed };
}
