/**
 * The PostgreSQL NOTIFY channel that carries cluster wake-ups (coordination port, WakeTopic),
 * named per schema so that two postrider services sharing one database never wake each other.
 * The payload is the topic ('queue', 'outbox', 'broadcasts', 'purges').
 *
 * Two writers use it: the PostgreSQL coordination (wake() after a verb resolved) and the
 * PostgreSQL store engine, which notifies 'outbox' inside the transaction that enqueued webhook
 * deliveries: PostgreSQL delivers a NOTIFY only if and when its transaction commits, so no
 * dispatcher is woken for entries that are not there yet. Here because both need the one name
 * and neither may import the other.
 */
export function wakeChannel(schema: string): string {
  // A channel name is an identifier: at most 63 bytes; schema names are at most 63 too.
  return `${schema}_wake`.slice(0, 63);
}
