/**
 * The queue as an account sees it through the API (GET /queue, /queue/messages, and retry and
 * drop of one message): what the operator's `postrider queue` does for the whole daemon, scoped
 * to the caller. Reads follow the key's scope (a channel key sees its channel's messages);
 * retry and drop need an account-level key (domain/access.ts), after the message's own
 * visibility (404, 403) as every resource's writes check it. They apply the operator's verbs to
 * the message's jobs (store/account-queue.ts), so a drop ends the message exactly as
 * `postrider queue drop` does: a bounced event per recipient, which webhooks and activity see.
 *
 * A destination is a recipient domain: delivery keeps one job per message and recipient domain
 * (store/messages.ts). Domains whose MX hosts are shared (one MX site, delivery/sites.ts) are
 * listed apart, each with its `site`: the site of a domain is known only to the running
 * dispatcher, in memory, and changes with DNS, so it names the group without keying it.
 *
 * A send is committed first and composed and DKIM-signed after (submission/finishing.ts): until
 * its signed body is stored, its jobs are queued with their creation time as due time but are not
 * due (store/signing.ts). The views call such a job `preparing` with no next attempt (null: not
 * scheduled yet, waiting for its signature), so a burst that outruns signing reads as messages
 * being prepared, not as messages long due with nothing sending.
 */
import { visibleMessage } from '../activity/queries.js';
import { requireAccountKey } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import type { DeliveryAttempt, DeliveryJob, MessageRecord, Principal } from '../domain/types.js';
import type { LastReply, QueueDestination, QueueJob, QueueMessage, QueueSummary } from '../domain/wire.js';
import type { StorePort } from '../store/port/index.js';
import type { MessageJobsOutcome, QueuedMessage } from '../store/port/queue.js';

/**
 * Queued messages one GET /queue looks at, at most (oldest first). Each costs about 25 µs of CPU
 * (its accepted event, its messageJobs range, its jobs decoded): 41-62 ms for 2,000 messages of
 * two jobs each, measured warm, within the activity pages' budget (store/activity-query.ts).
 */
export const SUMMARY_SCAN_LIMIT = 2_000;
/** Queued messages one page of GET /queue/messages looks at, at most, to find `limit` matches. */
export const PAGE_SCAN_LIMIT = 2_000;

export interface QueuePage {
  results: QueueMessage[];
  after: number;
  /** The page stopped at PAGE_SCAN_LIMIT before `limit` matches: more may follow. */
  partial: boolean;
}

export interface AccountQueueOptions {
  store: StorePort;
  /** The dispatcher's site of a recipient domain (DeliveryService.siteOf); default: the domain. */
  siteOf?: (domain: string) => string;
  /**
   * Jobs became due now (a retry): the dispatcher sleeps until the due time it last planned
   * (DeliveryService.notify wakes it), which after a deferral is minutes or hours away.
   */
  onDue?: () => void;
  now?: () => number;
}

export class AccountQueue {
  constructor(private readonly o: AccountQueueOptions) {}

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** Waiting messages per destination over the oldest SUMMARY_SCAN_LIMIT queued messages of the account. */
  async destinations(p: Principal, o: { limit: number }): Promise<QueueSummary> {
    const walk = await this.o.store.queue.walkAccount({ accountId: p.accountId, channelId: p.channelId ?? undefined, afterSeq: 0, limit: Infinity, scanLimit: SUMMARY_SCAN_LIMIT });
    const byDomain = new Map<string, OpenJob[]>();
    for (const m of walk.messages) {
      for (const job of m.jobs) {
        const jobs = byDomain.get(job.domain);
        if (jobs) jobs.push({ job, preparing: m.preparing });
        else byDomain.set(job.domain, [{ job, preparing: m.preparing }]);
      }
    }
    const all = [...byDomain].map(([destination, jobs]) => destinationOf(destination, this.o.siteOf?.(destination) ?? destination, jobs));
    all.sort((a, b) => b.messages - a.messages || a.destination.localeCompare(b.destination));
    const preparing = walk.messages.filter((m) => m.preparing).length;
    return { results: all.slice(0, o.limit), destinationCount: all.length, scannedMessages: walk.scanned, preparing, complete: walk.reachedEnd };
  }

  /** A page of queued messages, oldest first, with the activity routes' cursor (the accepted event's seq). */
  async messages(p: Principal, o: { destination?: string; limit: number; afterSeq: number }): Promise<QueuePage> {
    const walk = await this.o.store.queue.walkAccount({
      accountId: p.accountId,
      channelId: p.channelId ?? undefined,
      domain: o.destination,
      afterSeq: o.afterSeq,
      limit: o.limit,
      scanLimit: PAGE_SCAN_LIMIT,
    });
    const partial = !walk.reachedEnd && walk.messages.length < o.limit;
    const after = walk.messages.length === o.limit ? walk.messages[walk.messages.length - 1].seq : walk.lastSeq;
    return { results: walk.messages.map(queuedView), after, partial };
  }

  /**
   * The message's waiting jobs (to `destination` when given) become due now; those of a message
   * still being prepared only get their due time (still `preparing` in the answer): they become
   * due once it is signed, and nothing wakes the dispatcher.
   */
  async retry(p: Principal, id: string, destination?: string): Promise<QueueMessage> {
    const m = await this.writableBy(p, id);
    const outcome = await this.o.store.queue.retryMessage({ messageId: m.id, domain: destination, nowMs: this.now() });
    refuseUnchanged(m, outcome, destination, 'retried');
    if (!outcome.preparing) this.o.onDue?.();
    return this.after(m, outcome);
  }

  /** The message's waiting jobs (to `destination` when given) end with a bounced event per recipient. */
  async drop(p: Principal, id: string, destination?: string): Promise<QueueMessage> {
    const m = await this.writableBy(p, id);
    const outcome = await this.o.store.queue.dropMessage({ messageId: m.id, domain: destination, now: new Date(this.now()) });
    refuseUnchanged(m, outcome, destination, 'dropped');
    return this.after(m, outcome);
  }

  /** visibleMessage (404, 403), then the account-key rule: a channel key learns 404/403 as for a read first. */
  private async writableBy(p: Principal, id: string): Promise<MessageRecord> {
    const m = await visibleMessage(this.o.store, p, id);
    requireAccountKey(p);
    return m;
  }

  /** The message after the verb: the jobs it acted on, and its status over all of its jobs. */
  private async after(m: MessageRecord, outcome: MessageJobsOutcome): Promise<QueueMessage> {
    const status = (await this.o.store.messages.get(m.id))?.status ?? 'sent';
    return messageView({ messageId: m.id, channelId: m.channelId, subject: m.subject, queuedAt: m.createdAt }, outcome.jobs, outcome.preparing, status);
  }
}

/** 404 for a destination the message has no delivery to; 409 when nothing was waiting (or an attempt is under way). */
function refuseUnchanged(m: MessageRecord, o: MessageJobsOutcome, destination: string | undefined, verb: string): void {
  if (o.changed > 0) return;
  if (o.matched === 0) {
    throw new AppError(destination === undefined ? 'conflict' : 'not_found', destination === undefined ? `Message ${m.id} has no delivery to retry or drop` : `Message ${m.id} has no delivery to ${destination}`);
  }
  if (o.leased > 0) throw new AppError('conflict', `A delivery attempt of message ${m.id} is under way; nothing was ${verb}. Try again when it has ended`);
  throw new AppError('conflict', `Message ${m.id} is not queued${destination === undefined ? '' : ` to ${destination}`}: every recipient has a final outcome`);
}

/** An open job and whether its message is still being composed and signed. */
interface OpenJob {
  job: DeliveryJob;
  preparing: boolean;
}

/** A destination's line from its open jobs (one per message: a job is per message and domain). */
function destinationOf(destination: string, site: string, open: OpenJob[]): QueueDestination {
  const jobs = open.map((o) => o.job);
  const states = open.map((o) => jobState(o.job, o.preparing));
  return {
    destination,
    site,
    messages: jobs.length,
    sending: states.filter((s) => s === 'sending').length,
    preparing: states.filter((s) => s === 'preparing').length,
    oldestQueuedAt: earliest(jobs.map((j) => j.createdAt))!,
    nextAttemptAt: earliest(jobs.map((j, i) => (states[i] === 'queued' ? j.dueAt : null))),
    lastReply: lastReplyOf(jobs),
  };
}

function queuedView(q: QueuedMessage): QueueMessage {
  const a = q.accepted;
  return messageView({ messageId: a.messageId, channelId: a.channelId, subject: a.subject, queuedAt: a.timestamp }, q.jobs, q.preparing, 'queued');
}

function messageView(
  base: Pick<QueueMessage, 'messageId' | 'channelId' | 'subject' | 'queuedAt'>,
  jobs: DeliveryJob[],
  preparing: boolean,
  status: QueueMessage['status'],
): QueueMessage {
  // Jobs come in id order (random): listed by destination, so a page reads the same each time.
  const destinations = jobs.map((j) => jobView(j, preparing)).sort((a, b) => a.destination.localeCompare(b.destination));
  const open = destinations.filter((d) => d.state !== 'done');
  return {
    ...base,
    status,
    to: open.flatMap((d) => d.recipients),
    attempts: Math.max(0, ...jobs.map((j) => j.attempts)),
    nextAttemptAt: earliest(open.map((d) => d.nextAttemptAt)),
    lastReply: lastReplyOf(jobs),
    destinations,
  };
}

/** A queued job of a message still being prepared is not due, whatever its dueAt (the commit time, or a retry's). */
function jobState(j: DeliveryJob, preparing: boolean): QueueJob['state'] {
  if (j.state === 'leased') return 'sending';
  return j.state === 'queued' && preparing ? 'preparing' : j.state;
}

function jobView(j: DeliveryJob, preparing: boolean): QueueJob {
  const state = jobState(j, preparing);
  return { destination: j.domain, recipients: j.recipients, state, attempts: j.attempts, nextAttemptAt: state === 'queued' ? j.dueAt : null, lastReply: lastReplyOf([j]) };
}

function lastReplyOf(jobs: DeliveryJob[]): LastReply | null {
  let last: DeliveryAttempt | undefined;
  for (const j of jobs) {
    const a = j.history[j.history.length - 1];
    if (a && (!last || a.at > last.at)) last = a;
  }
  if (!last) return null;
  const { at, mx, smtpCode, enhancedCode, response, outcome } = last;
  return { at, mx, smtpCode, enhancedCode, response, outcome };
}

/** The earliest of ISO timestamps (they sort as strings); null for none. */
function earliest(times: Array<string | null>): string | null {
  let min: string | null = null;
  for (const t of times) if (t !== null && (min === null || t < min)) min = t;
  return min;
}
