/**
 * The PostgreSQL NOTIFY channel that carries cluster wake-ups (coordination port, WakeTopic),
 * and its payload. Named per schema so that two postrider services sharing one database (or two
 * test schemas) never wake each other; readable when it fits PostgreSQL's 63-byte identifiers,
 * else a hash of the schema.
 *
 * Two writers use it: the PostgreSQL coordination (wake() after a verb resolved) and the
 * PostgreSQL store engine, which notifies 'outbox' inside the transaction that enqueued webhook
 * deliveries: PostgreSQL delivers a NOTIFY only if and when its transaction commits, so no
 * dispatcher is woken for entries that are not there yet. Here because both need the one name
 * and format, and neither may import the other.
 */
import { createHash } from 'node:crypto';

export function wakeChannel(schema: string): string {
  const plain = `postrider_wake_${schema}`;
  return plain.length <= 63 ? plain : `postrider_wake_${createHash('sha256').update(schema).digest('hex').slice(0, 40)}`;
}

/**
 * "<sender> <topic>": the sender lets a coordination instance skip its own notifications (it
 * has woken its own listeners already); the store engine signs its notifications 'store'.
 */
export function wakePayload(sender: string, topic: string): string {
  return `${sender} ${topic}`;
}

export function parseWakePayload(payload: string): { sender: string; topic: string } {
  const space = payload.indexOf(' ');
  return space < 0 ? { sender: '', topic: payload } : { sender: payload.slice(0, space), topic: payload.slice(space + 1) };
}
