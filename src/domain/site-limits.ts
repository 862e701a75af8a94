/**
 * Connection limits of the big mailbox providers as data, in the spirit of bounce-rules.ts and
 * of KumoMTA's shaping file: an entry applies to an MX site (delivery/sites.ts) when one of the
 * site's MX host names ends in one of its suffixes. delivery/site-limits.ts applies them, after
 * the operator's `delivery.sites` overrides and before `delivery.perDomainConcurrency`.
 *
 * The numbers are starting points for one sending IP, chosen below what each provider is known
 * to tolerate, so that a new sender is not throttled on its first day: the providers publish no
 * hard figures, they answer with 421 / 4.7.x when a sender asks too much, and the dispatcher then
 * halves the site's concurrency anyway (delivery/site-concurrency.ts). Providers that accept
 * many connections get more than the default of 3; the strict ones get fewer.
 */

export interface SiteLimits {
  /** Delivery attempts (connections) in flight to the site at most. */
  concurrency: number;
  /** Messages sent over one connection before it is closed (the connection cache reads it). */
  maxMessagesPerConnection?: number;
}

export interface ProviderLimits extends Partial<SiteLimits> {
  /** Who it is, for logs and tests. */
  id: string;
  /** MX host name suffixes, lowercase, without a leading dot; "google.com" matches "google.com" and "*.google.com". */
  suffixes: readonly string[];
}

export const PROVIDER_LIMITS: readonly ProviderLimits[] = [
  // Gmail and Google Workspace: aspmx.l.google.com, gmail-smtp-in.l.google.com, alt*.googlemail.com.
  // Google takes many parallel sessions and asks (421 4.7.28) when it wants fewer.
  { id: 'google', suffixes: ['google.com', 'googlemail.com'], concurrency: 10, maxMessagesPerConnection: 100 },
  // Outlook.com, Hotmail and every Microsoft 365 tenant: <tenant>.mail.protection.outlook.com,
  // hotmail-com.olc.protection.outlook.com. 4.7.500 "Server busy" is its throttling reply.
  { id: 'microsoft', suffixes: ['protection.outlook.com'], concurrency: 8, maxMessagesPerConnection: 100 },
  // Yahoo and AOL (mta5.am0.yahoodns.net): [TSS04] deferrals come quickly with many sessions.
  { id: 'yahoo', suffixes: ['yahoodns.net'], concurrency: 5, maxMessagesPerConnection: 20 },
  // Apple iCloud (mx01.mail.icloud.com): strict with new senders.
  { id: 'apple', suffixes: ['icloud.com'], concurrency: 4, maxMessagesPerConnection: 20 },
  // GMX, web.de and mail.com (United Internet: mx00.emig.gmx.net, mx-ha03.web.de): strict.
  { id: 'united-internet', suffixes: ['gmx.net', 'web.de', 'mail.com'], concurrency: 2, maxMessagesPerConnection: 20 },
  // Mail.ru (mxs.mail.ru).
  { id: 'mail-ru', suffixes: ['mail.ru'], concurrency: 4, maxMessagesPerConnection: 50 },
  // Yandex (mx.yandex.ru, mx.yandex.net).
  { id: 'yandex', suffixes: ['yandex.ru', 'yandex.net'], concurrency: 4, maxMessagesPerConnection: 50 },
  // Proton (mail.protonmail.ch) and Fastmail (in1-smtp.messagingengine.com).
  { id: 'proton', suffixes: ['protonmail.ch'], concurrency: 3, maxMessagesPerConnection: 50 },
  { id: 'fastmail', suffixes: ['messagingengine.com'], concurrency: 5, maxMessagesPerConnection: 50 },
  // Comcast (mx1.comcast.net) throttles hard per IP.
  { id: 'comcast', suffixes: ['comcast.net'], concurrency: 2, maxMessagesPerConnection: 20 },
];
