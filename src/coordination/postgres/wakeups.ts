/**
 * Wake-ups across nodes (port.ts, wake/onWake): NOTIFY on the schema's channel with the topic
 * as payload, LISTEN on one dedicated connection (postgres.js's sql.listen), the way
 * graphile-worker wakes its workers.
 *
 * - wake(topic) calls this node's listeners at once (wakeups.ts, as the single node does) and
 *   sends the NOTIFY in the background; it never throws and never waits. Its own notification
 *   comes back on the node's LISTEN and is skipped (the payload names the sending instance).
 *   Per topic at most one NOTIFY is in flight and one more queued: a burst of wakes sends two,
 *   not one per wake (wake-ups may be coalesced).
 * - The channel is named after the schema, so two postrider clusters sharing one database (or
 *   two test schemas) do not wake each other.
 * - postgres.js reconnects a dropped LISTEN connection by itself and listens again. The
 *   notifications sent while it was down are lost (PostgreSQL keeps none for a session that is
 *   gone); so on every reconnect each topic's listeners are called once, and the receivers look
 *   for work at once instead of at their idle check (port.ts: a wake-up is a hint, the work is
 *   found in the store).
 */
import { randomUUID } from 'node:crypto';
import { parseWakePayload, wakePayload } from '../../domain/wake-channel.js';
import { LocalWakeups } from '../wakeups.js';
import type { WakeTopic } from '../port.js';
import type { Sql } from './connection.js';

const TOPICS: readonly WakeTopic[] = ['queue', 'outbox', 'broadcasts', 'purges'];

/** The schema's channel (domain/wake-channel.ts: the store engine notifies 'outbox' on it too). */
export { wakeChannel } from '../../domain/wake-channel.js';

export class PgWakeups {
  private readonly local: LocalWakeups;
  /** Who sent a notification: this instance's own come back and are skipped. */
  private readonly sender = randomUUID();
  private readonly sending = new Map<WakeTopic, 'one' | 'two'>();
  private listening: Promise<{ state: { pid: number }; unlisten(): Promise<void> }> | undefined;
  private listens = 0;
  private stopped = false;

  constructor(
    private readonly sql: Sql,
    private readonly channel: string,
    private readonly onError: (err: unknown) => void,
    onListenerError?: (err: unknown, topic: WakeTopic) => void,
  ) {
    this.local = new LocalWakeups(onListenerError);
  }

  /** Listens; resolves once the LISTEN is in place (a wake sent after it reaches this node). */
  async start(): Promise<void> {
    this.listening = this.sql.listen(
      this.channel,
      (payload) => this.received(payload),
      () => this.listened(),
    );
    await this.listening;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const l = await this.listening?.catch(() => undefined);
    await l?.unlisten().catch(() => undefined);
  }

  /** The LISTEN connection's server process (its state is updated at each reconnect). */
  async pid(): Promise<number | undefined> {
    return (await this.listening)?.state.pid;
  }

  wake(topic: WakeTopic): void {
    this.local.wake(topic);
    if (this.stopped) return;
    const state = this.sending.get(topic);
    if (state) {
      this.sending.set(topic, 'two');
      return;
    }
    this.sending.set(topic, 'one');
    this.notify(topic);
  }

  onWake(topic: WakeTopic, fn: () => void): () => void {
    return this.local.onWake(topic, fn);
  }

  /** One NOTIFY; when wakes came meanwhile, one more after it. */
  private notify(topic: WakeTopic): void {
    void this.sql`SELECT pg_notify(${this.channel}, ${wakePayload(this.sender, topic)})`.then(
      () => this.sent(topic),
      (err: unknown) => {
        this.onError(err);
        this.sent(topic);
      },
    );
  }

  private sent(topic: WakeTopic): void {
    const again = this.sending.get(topic) === 'two' && !this.stopped;
    if (again) {
      this.sending.set(topic, 'one');
      this.notify(topic);
    } else this.sending.delete(topic);
  }

  private received(payload: string): void {
    const { sender, topic } = parseWakePayload(payload);
    if (sender === this.sender || !TOPICS.includes(topic as WakeTopic)) return;
    this.local.wake(topic as WakeTopic);
  }

  /** Called at each LISTEN: after a reconnect, what was sent meanwhile is lost, so every topic wakes. */
  private listened(): void {
    if (this.listens++ === 0 || this.stopped) return;
    for (const topic of TOPICS) this.local.wake(topic);
  }
}
