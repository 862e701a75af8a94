/**
 * The tables of the messages and broadcasts aggregates (part of migration 1, schema/index.ts).
 * Until the first release every table is created here; afterwards a change is a new migration.
 *
 * Every table of a channel's data carries account_id and channel_id, indexed by channel_id: the
 * channel purge deletes by it. Records are whole in `doc` (as the port returns them); the columns
 * beside it are what a query filters, orders or locks on, kept in the same statement as `doc`.
 *
 * - messages: status and open_jobs are the record's (kept in step with doc; the queued ones are
 *   also in the events group's message_queue, event-log.ts). broadcast_id finds a broadcast's
 *   messages (cancel) and attributes broadcast mail's events to the broadcast (statistics). The
 *   record has no acceptedSeq (an LMDB engine key, optional in MessageRecord): message_queue
 *   keeps the accepted event's seq.
 * - message_bodies: the message as it is sent (bytea, never jsonb).
 * - client_message_ids: the client's own Message-ID → our message, per account (feedback reports).
 * - unfinished_messages: messages waiting for the finishing stage (LMDB's `unsigned`), with the
 *   committed request (`compose`, opaque JSON text as bytea: may hold whole attachments) and the
 *   failed tries; (committed_ms, message_id) answers the oldest one.
 * - send_quota: a pending account's recipients counted so far (conditional update, send-quota.ts).
 * - broadcasts, broadcast_entries, broadcast_failures, broadcast_suppressions, broadcast_counters:
 *   the broadcast record, its entries not yet expanded, the entries that became no message, the
 *   recipients left out because suppressed, the finished/canceled counts of its messages.
 *
 * Ids and addresses are COLLATE "C": byte order, as LMDB's keys (a
 * language collation would sort uuids by their hex digits alone, ignoring the hyphens).
 */
export const SQL = `
CREATE TABLE messages (
  id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  broadcast_id text COLLATE "C",
  status text NOT NULL,
  open_jobs int4 NOT NULL,
  created_ms int8 NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX messages_channel ON messages (channel_id);
CREATE INDEX messages_broadcast ON messages (broadcast_id) WHERE broadcast_id IS NOT NULL;

CREATE TABLE message_bodies (
  message_id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  body bytea NOT NULL
);
CREATE INDEX message_bodies_channel ON message_bodies (channel_id);

CREATE TABLE client_message_ids (
  account_id text COLLATE "C" NOT NULL,
  client_id text COLLATE "C" NOT NULL,
  message_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (account_id, client_id, message_id)
);
CREATE INDEX client_message_ids_message ON client_message_ids (message_id);
CREATE INDEX client_message_ids_channel ON client_message_ids (channel_id);

CREATE TABLE unfinished_messages (
  message_id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  committed_ms int8 NOT NULL,
  domain text,
  compose bytea,
  failures jsonb
);
CREATE INDEX unfinished_messages_age ON unfinished_messages (committed_ms, message_id);
CREATE INDEX unfinished_messages_channel ON unfinished_messages (channel_id);

CREATE TABLE send_quota (
  account_id text COLLATE "C" PRIMARY KEY,
  used int8 NOT NULL
);

CREATE TABLE broadcasts (
  id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  created_ms int8 NOT NULL,
  state text NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX broadcasts_expanding ON broadcasts (created_ms, id) WHERE state = 'expanding';
CREATE INDEX broadcasts_channel ON broadcasts (channel_id, created_ms DESC, id DESC);

CREATE TABLE broadcast_entries (
  broadcast_id text COLLATE "C" NOT NULL,
  idx int4 NOT NULL,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  entry jsonb NOT NULL,
  PRIMARY KEY (broadcast_id, idx)
);
CREATE INDEX broadcast_entries_channel ON broadcast_entries (channel_id);

CREATE TABLE broadcast_failures (
  broadcast_id text COLLATE "C" NOT NULL,
  idx int4 NOT NULL,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  doc jsonb NOT NULL,
  PRIMARY KEY (broadcast_id, idx)
);
CREATE INDEX broadcast_failures_channel ON broadcast_failures (channel_id);

CREATE TABLE broadcast_suppressions (
  broadcast_id text COLLATE "C" NOT NULL,
  email text COLLATE "C" NOT NULL,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (broadcast_id, email)
);
CREATE INDEX broadcast_suppressions_channel ON broadcast_suppressions (channel_id);

CREATE TABLE broadcast_counters (
  broadcast_id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  finished int4 NOT NULL DEFAULT 0,
  canceled int4 NOT NULL DEFAULT 0
);
CREATE INDEX broadcast_counters_channel ON broadcast_counters (channel_id);
`;
