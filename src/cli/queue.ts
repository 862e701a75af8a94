/** postrider queue list|retry|drop */
import type { DeliveryJob } from '../domain/types.js';
import { drop, listQueue, retry, type JobListState, type OperatorResult } from '../queue/operator.js';
import { parse, table, UsageError, type CommandIo } from './args.js';
import { withStore } from './with-store.js';

const USAGE = `Usage:
  postrider queue list [--state open|queued|leased|done] [--limit N] [--offset N]
  postrider queue retry JOB_ID
  postrider queue drop JOB_ID

A job is one message's delivery to one recipient domain. "list" shows jobs in flight (leased)
and waiting (queued, by due time), and counts the messages still being composed and signed
(preparing: their jobs join the queue once signed); "retry" makes a queued job due now; "drop" gives a queued
job up: its recipients get a bounced event with reason "dropped by operator" (nothing
disappears silently). A running daemon picks retried jobs up within a minute.
Options: --config PATH, --json, --help`;

const STATES: readonly JobListState[] = ['open', 'queued', 'leased', 'done'];

export async function queueCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals, help } = parse(
    argv,
    { state: { type: 'string' }, limit: { type: 'string' }, offset: { type: 'string' }, config: { type: 'string' }, json: { type: 'boolean' } },
    USAGE,
    { list: 1, retry: 2, drop: 2 },
  );
  const [sub, id] = positionals;
  if (help || !sub) {
    io.out(USAGE);
    return help ? 0 : 2;
  }
  if (sub !== 'list' && sub !== 'retry' && sub !== 'drop') throw new UsageError(`unknown subcommand "${sub}"`, USAGE);
  const state = (values.state ?? 'open') as JobListState;
  if (!STATES.includes(state)) throw new UsageError(`--state must be one of ${STATES.join(', ')}`, USAGE);
  const limit = count(values.limit, 50, '--limit');
  const offset = count(values.offset, 0, '--offset');
  if (sub !== 'list' && !id) throw new UsageError('JOB_ID is required', USAGE);
  return withStore(io, values.config, async (store) => {
    if (sub === 'list') {
      const { counts: c, jobs } = await listQueue(store, { state, limit, offset }, Date.now());
      if (values.json) {
        io.out(JSON.stringify({ counts: c, jobs }));
        return 0;
      }
      io.out(`queued ${c.queued} (due now ${c.dueNow}), leased ${c.leased}, preparing ${c.preparing} message(s) (being composed and signed: due once signed)`);
      if (jobs.length > 0) io.out(table(jobs.map(row), ['id', 'state', 'domain', 'rcpts', 'attempts', 'dueAt', 'messageId', 'last']));
      return 0;
    }
    const { result, job } = sub === 'retry' ? await retry(store, id, Date.now()) : await drop(store, id);
    if (values.json) io.out(JSON.stringify({ id, result, job: job ?? null }));
    else io.out(describe(sub, id, result));
    return result === 'ok' ? 0 : 1;
  });
}

function count(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new UsageError(`${name} must be a non-negative integer`, USAGE);
  return Number(raw);
}

function row(j: DeliveryJob): Record<string, unknown> {
  const last = j.history[j.history.length - 1];
  return {
    id: j.id,
    state: j.state,
    domain: j.domain,
    rcpts: j.recipients.length,
    attempts: j.attempts,
    dueAt: j.state === 'leased' ? `leased until ${j.leaseUntil}` : j.dueAt,
    messageId: j.messageId,
    last: last ? `${last.outcome}: ${last.response}`.slice(0, 80) : '',
  };
}

function describe(sub: 'retry' | 'drop', id: string, r: OperatorResult): string {
  switch (r) {
    case 'ok':
      return sub === 'retry' ? `job ${id} is due now` : `dropped job ${id}: its recipients are bounced (dropped by operator)`;
    case 'not_found':
      return `no job ${id}`;
    case 'leased':
      return `job ${id} is being delivered right now; try again when the attempt is over`;
    case 'done':
      return `job ${id} is already finished`;
  }
}
