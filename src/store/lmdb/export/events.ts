/**
 * The event log as transfer records, with its seqs (API cursors stay valid), its clock, the
 * queued messages' marks, and the engagement report marks, which LMDB does not keep as entries
 * but reads from the log: a recipient of a `complained` event, or of a `bounced` event from a
 * report (details.async), was reported for that message (store/lmdb/engagement.ts
 * withoutReportEvent). They are gathered while the events are read, and written after them.
 */
import type { EventRecord } from '../../../domain/types.js';
import type { TransferRecords } from '../../port/transfer.js';
import { entriesOf, type ExportContext } from './context.js';

type Mark = TransferRecords['engagementMarks'];

/** Every event, in seq order; the report marks they imply are kept in `marks` for engagementMarks. */
export function events(marks: Map<string, Mark>): (c: ExportContext) => Generator<EventRecord> {
  return function* (c) {
    for (const { value } of entriesOf(c.dbs.events)) {
      const e = value as EventRecord;
      if (e.eventType === 'complained' || (e.eventType === 'bounced' && e.details.async === true)) addMarks(marks, e);
      yield e;
    }
  };
}

function addMarks(marks: Map<string, Mark>, e: EventRecord): void {
  const eventType = e.eventType as Mark['eventType'];
  for (const recipient of new Set(e.recipients.map((r) => r.toLowerCase()))) {
    const key = JSON.stringify([e.messageId, eventType, recipient]);
    // The first report of a recipient is the one that counted; a later one was never recorded.
    if (!marks.has(key)) marks.set(key, { messageId: e.messageId, eventType, recipient, accountId: e.accountId, channelId: e.channelId, atMs: Date.parse(e.timestamp) });
  }
}

export function engagementMarks(marks: Map<string, Mark>): (c: ExportContext) => Generator<Mark> {
  return function* (c) {
    c.derived.engagementMarks = marks.size;
    yield* marks.values();
  };
}

export function* eventClock(c: ExportContext): Generator<TransferRecords['eventClock']> {
  for (const { key } of entriesOf(c.dbs.eventClock)) {
    const [clockMs, seq] = key as [number, number];
    yield { clockMs, seq };
  }
}

/** [accountId, acceptedSeq]: the message and its channel are the accepted event's (retention removes both together). */
export function* messageQueue(c: ExportContext): Generator<TransferRecords['messageQueue']> {
  for (const { key } of entriesOf(c.dbs.messageQueue)) {
    const [accountId, acceptedSeq] = key as [string, number];
    const e = c.dbs.events.get(acceptedSeq) as EventRecord | undefined;
    if (e) yield { accountId, acceptedSeq, messageId: e.messageId, channelId: e.channelId };
  }
}

export function* eventLog(c: ExportContext): Generator<TransferRecords['eventLog']> {
  const meta = c.dbs.meta;
  yield {
    lastSeq: (meta.get('eventSeq') as number | undefined) ?? 0,
    clockMs: (meta.get('eventClockMs') as number | undefined) ?? null,
    floor: (meta.get('eventFloor') as number | undefined) ?? 1,
  };
}
