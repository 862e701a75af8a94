/** Pure record types shared by every layer. Timestamps are ISO 8601 strings (spec section 2). */

export type AccountState = 'pending' | 'active' | 'suspended';
export const ACCOUNT_STATES: readonly AccountState[] = ['pending', 'active', 'suspended'];

export interface Account {
  id: string;
  name: string;
  state: AccountState;
  createdAt: string;
  updatedAt: string;
}

export interface ApiKey {
  id: string;
  accountId: string;
  /** null: account-level key; otherwise the one channel this key may act on. */
  channelId: string | null;
  name: string;
  /** First characters of the token, shown in listings so operators can tell keys apart. */
  prefix: string;
  /** SHA-256 of the whole token, hex. The token itself is never stored. */
  hash: string;
  createdAt: string;
  revokedAt: string | null;
}

export type DeliveryType = 'live' | 'sandbox';
export const DELIVERY_TYPES: readonly DeliveryType[] = ['live', 'sandbox'];

export interface Tracking {
  links: boolean;
  opens: boolean;
}

export interface Channel {
  id: string;
  accountId: string;
  name: string;
  deliveryType: DeliveryType;
  tracking: Tracking;
  createdAt: string;
  updatedAt: string;
}

/** Who is calling: resolved from an API key by the HTTP and SMTP adapters. */
export interface Principal {
  keyId: string;
  accountId: string;
  channelId: string | null;
}
