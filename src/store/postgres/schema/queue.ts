/**
 * The tables of the delivery queue (part of migration 1, schema/index.ts). Until the first
 * release every table is created here; afterwards a change is a new migration.
 *
 * `jobs` holds the open jobs only (held, queued, leased): the rows every lease, outcome and
 * recovery touches. A job that finishes moves to `finished_jobs` in the same transaction (a
 * DELETE here, an INSERT there), so the hot table and its indexes stay as small as the queue
 * and the dead tuples its updates leave are bounded by the queue's size, not by how many
 * messages were ever sent. Finished jobs are written once and removed by retention or a
 * channel's purge.
 *
 * States of `jobs.state`:
 *  - held: queued, but its message still waits for composition and signing (the LMDB engine's
 *    job outside jobsDue); the port shows it as `queued` (doc.state) and it is not due;
 *  - queued: due at due_at (ms), in the due index;
 *  - leased: leased to lease_owner until lease_until (ms) under lease_generation.
 * lease_generation stays with the job for good (the next lease takes the next one); it and
 * lease_owner are fencing bookkeeping, never in doc (the port's records leave them out).
 *
 * doc is the job as the port returns it (DeliveryJob, without leaseOwner/leaseGeneration); its
 * state, dueAt and leaseUntil always say what the columns say (held shows as queued).
 *
 * Ids use the C collation: the due order (due_at, id) and the done list (id) are byte order,
 * as the LMDB engine's keys, whatever the database's locale.
 */
export const SQL = `
CREATE TABLE jobs (
  id text COLLATE "C" PRIMARY KEY,
  message_id text COLLATE "C" NOT NULL,
  account_id text NOT NULL,
  channel_id text NOT NULL,
  domain text NOT NULL,
  state text NOT NULL CHECK (state IN ('held', 'queued', 'leased')),
  due_at int8 NOT NULL,
  lease_until int8,
  lease_owner text,
  lease_generation int4 NOT NULL DEFAULT 0,
  doc jsonb NOT NULL
);
-- The lease scan, nextDueAfter, counts and list(queued): due order; domain and channel_id in
-- the index so the scan skips a busy domain or a deleted channel without reading the row.
CREATE INDEX jobs_due ON jobs (due_at, id) INCLUDE (domain, channel_id) WHERE state = 'queued';
-- recover, counts and list(leased): by lease expiry.
CREATE INDEX jobs_leased ON jobs (lease_until, id) WHERE state = 'leased';
CREATE INDEX jobs_message ON jobs (message_id);
-- A deleted channel's purge.
CREATE INDEX jobs_channel ON jobs (channel_id);

CREATE TABLE finished_jobs (
  id text COLLATE "C" PRIMARY KEY,
  message_id text COLLATE "C" NOT NULL,
  account_id text NOT NULL,
  channel_id text NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX finished_jobs_message ON finished_jobs (message_id);
CREATE INDEX finished_jobs_channel ON finished_jobs (channel_id);
`;
