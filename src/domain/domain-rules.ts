/**
 * The refusals of the sending-domain rules that both the domain service (its cheap early check,
 * before a key is generated) and the store (the atomic check in its commit) make, so the two
 * answer alike; and the selectors a domain has used, which a new key may not take again.
 */
import { AppError } from './errors.js';
import { keySelectors, type SendingDomain } from './sending-domain.js';

/** 422 on /name: the account has a domain of this name already. */
export function duplicateName(name: string): AppError {
  return new AppError('validation_failed', `The account already has the domain ${name}`, {
    errors: { '/name': [{ code: 'duplicate', message: `${name} is already registered in this account` }] },
  });
}

/** 403: the account has config.limits.domainsPerAccount domains already. */
export function domainLimitExceeded(max: number): AppError {
  return new AppError('resource_limit_exceeded', `An account may have at most ${max} domains`);
}

/** Every selector the domain has used, so a new key never reuses one. */
export function selectorsOf(d: SendingDomain): Set<string> {
  return new Set([...keySelectors(d.activeKey), ...(d.pendingKey ? keySelectors(d.pendingKey) : []), ...d.retiredKeys.map((k) => k.selector)]);
}
