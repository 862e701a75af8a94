/** The event types in the order the filters offer them, and an address as the pages show it; the answers' shapes are in ../wire. */
import type { Address, EventType } from '../wire';

export const EVENT_TYPES = ['accepted', 'processed', 'delivered', 'bounced', 'opened', 'clicked', 'complained', 'unsubscribed', 'resubscribed', 'canceled'] as const satisfies readonly EventType[];
/** Fails the type check when the daemon has an event type this list leaves out. */
type Complete<Missing extends never> = Missing;
type EventTypesListed = Complete<Exclude<EventType, (typeof EVENT_TYPES)[number]>>;

/** "Ann <ann@…>" or the address alone. */
export function formatAddress(a: Address | undefined): string {
  if (!a) return '';
  return a.name ? `${a.name} <${a.email}>` : a.email;
}
