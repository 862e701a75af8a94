/**
 * The tables of the events and statistics aggregates (part of migration 1, schema/index.ts).
 * Until the first release every table is created here; afterwards a change is a new migration.
 *
 * - event_log_head: ONE row. `last` is the highest seq given out; appendEvents (event-log.ts)
 *   moves it with UPDATE ... SET last = last + n, whose row lock serializes appenders until
 *   COMMIT, so seqs commit in order and every snapshot holds a prefix of the log (the port's
 *   `after` cursor guarantee, store/port/events.ts).
 *   `clock_ms`: the largest event timestamp appended so far (the event clock);
 *   `clock_before_ms`: its value before the last append (so one UPDATE tells the appender which
 *   of its events raise the clock, without a second statement).
 * - event_log_floor: ONE row, the lowest seq retention kept. Apart from the head so that a
 *   retention sweep never takes (or waits for) the appenders' lock.
 * - events: the log. The record whole in `doc`; beside it every column a filter, order or join
 *   uses. recipients (lower-cased, distinct) and tags are arrays checked on the row; the ordered
 *   walks over them use event_terms.
 * - event_terms: one row per (event, lower-cased recipient) and (event, tag): the B-tree that
 *   walks "this account's events to this recipient / with this tag" in seq order (a GIN index
 *   answers membership but in no order, so a page over it would read every match first).
 * - events and event_terms are PARTITIONED BY RANGE (seq): seqs grow with the event clock, so a
 *   seq range is a time range, and retention drops a whole partition once the floor has passed
 *   its upper bound instead of deleting its rows one by one (a DELETE writes every row to the WAL
 *   and leaves dead tuples for VACUUM; a DROP is a catalog change). Rows below the floor stay in
 *   their partition until then, invisible: every reader bounds seq >= floor. seq is in both
 *   primary keys (a partition key must be). Indexes are declared on the parent, so every
 *   partition has them. Migration 1 creates the first partition [1, 65,536) of each; the engine
 *   adds the next ones ahead of the head (event-partitions.ts). The DEFAULT partition is the
 *   safety net: an append whose seq no range partition holds (maintenance lagged) lands there
 *   and never fails; retention deletes its old rows row-wise.
 * - event_clock: [clock_ms, seq] whenever an event raises the clock: "the first seq whose clock
 *   reaches T" is one index probe, which turns a time filter into a seq range.
 * - message_queue: the accepted events of messages still queued (a recipient waits for a final
 *   outcome): the message list's status filter, kept apart so that the log stays append-only.
 * - stat_counters: the statistics counters (store/port/events.ts StatisticsPort), per account,
 *   grain ('d' UTC day, 'q' quarter hour), tag ('' for the untagged total), bucket, channel, mail
 *   type and tag set (the event's sorted distinct tags, '{}' for the total), summed by upserts.
 *   Retention removes events, never counters.
 * - broadcast_statistics: the same counters per broadcast (BroadcastCounters.statistics), for the
 *   events of broadcast mail, attributed through the message record's broadcast_id (messages,
 *   the messages group's table).
 *
 * Every table of a channel's data has account_id and channel_id (the channel purge deletes by
 * channel_id). Ids are text COLLATE "C" like every other group's.
 */
export const SQL = `
CREATE TABLE event_log_head (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  last int8 NOT NULL,
  clock_ms int8,
  clock_before_ms int8
);
INSERT INTO event_log_head (id, last) VALUES (true, 0);

CREATE TABLE event_log_floor (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  floor int8 NOT NULL
);
INSERT INTO event_log_floor (id, floor) VALUES (true, 1);

CREATE TABLE events (
  seq int8 PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  message_id text COLLATE "C" NOT NULL,
  mail_type text COLLATE "C" NOT NULL,
  event_type text COLLATE "C" NOT NULL,
  ts_ms int8 NOT NULL,
  -- The subject lower-cased by JavaScript (as the LMDB engine compares it), for the substring filter.
  subject_lc text NOT NULL,
  recipients text[] COLLATE "C" NOT NULL,
  tags text[] COLLATE "C" NOT NULL,
  doc jsonb NOT NULL
) PARTITION BY RANGE (seq);
-- The walks of a page, each in seq order within one account: all events, a channel's, an event
-- type's, a mail type's. A message's events (ofMessage, the messageId filter, the bounce rule).
CREATE INDEX events_account ON events (account_id, seq);
CREATE INDEX events_channel ON events (account_id, channel_id, seq);
CREATE INDEX events_type ON events (account_id, event_type, seq);
CREATE INDEX events_mail_type ON events (account_id, mail_type, seq);
CREATE INDEX events_message ON events (message_id, seq);
-- The channel purge deletes by channel.
CREATE INDEX events_channel_purge ON events (channel_id);
CREATE TABLE events_p1 PARTITION OF events FOR VALUES FROM (1) TO (65536);
CREATE TABLE events_default PARTITION OF events DEFAULT;

CREATE TABLE event_terms (
  account_id text COLLATE "C" NOT NULL,
  -- 'r' recipient (lower case), 't' tag
  kind "char" NOT NULL,
  value text COLLATE "C" NOT NULL,
  seq int8 NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (account_id, kind, value, seq)
) PARTITION BY RANGE (seq);
-- Retention removes the lowest seqs (row-wise only in the DEFAULT partition); the channel purge
-- removes by channel.
CREATE INDEX event_terms_seq ON event_terms (seq);
CREATE INDEX event_terms_channel ON event_terms (channel_id);
CREATE TABLE event_terms_p1 PARTITION OF event_terms FOR VALUES FROM (1) TO (65536);
CREATE TABLE event_terms_default PARTITION OF event_terms DEFAULT;

-- Both columns grow together (a row is added only when the clock rises): seq is unique too,
-- and retention trims by it.
CREATE TABLE event_clock (
  clock_ms int8 PRIMARY KEY,
  seq int8 NOT NULL UNIQUE
);

CREATE TABLE message_queue (
  account_id text COLLATE "C" NOT NULL,
  accepted_seq int8 NOT NULL,
  message_id text COLLATE "C" NOT NULL UNIQUE,
  channel_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (account_id, accepted_seq)
);
CREATE INDEX message_queue_channel ON message_queue (channel_id);

CREATE TABLE stat_counters (
  account_id text COLLATE "C" NOT NULL,
  grain "char" NOT NULL CHECK (grain IN ('d', 'q')),
  tag text COLLATE "C" NOT NULL,
  bucket int8 NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  mail_type text COLLATE "C" NOT NULL,
  tag_set text[] COLLATE "C" NOT NULL,
  sent int8 NOT NULL,
  delivered int8 NOT NULL,
  opened int8 NOT NULL,
  clicked int8 NOT NULL,
  bounced int8 NOT NULL,
  unsubscribed int8 NOT NULL,
  complained int8 NOT NULL,
  PRIMARY KEY (account_id, grain, tag, bucket, channel_id, mail_type, tag_set)
);
CREATE INDEX stat_counters_channel ON stat_counters (channel_id);

CREATE TABLE broadcast_statistics (
  broadcast_id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  sent int8 NOT NULL,
  delivered int8 NOT NULL,
  opened int8 NOT NULL,
  clicked int8 NOT NULL,
  bounced int8 NOT NULL,
  unsubscribed int8 NOT NULL,
  complained int8 NOT NULL
);
CREATE INDEX broadcast_statistics_channel ON broadcast_statistics (channel_id);
`;
