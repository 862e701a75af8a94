/**
 * The versioned schema of the PostgreSQL engine. Migration n runs once per database, in order,
 * inside one transaction under an advisory lock (migrations.ts), so several nodes starting at
 * once apply each migration exactly once and none starts on a half-built schema.
 *
 * Migration 1 is the whole schema as first released, one part per group of aggregates (each
 * file in this folder); a later change is a new entry at the end of MIGRATIONS, never an edit of
 * an applied one.
 */
import { SQL as ACCOUNTS } from './accounts.js';
import { SQL as CHANNELS_DOMAINS } from './channels-domains.js';
import { SQL as DELIVERY_STATE } from './delivery-state.js';
import { SQL as EVENTS_STATS } from './events-stats.js';
import { CLAIM_OWNER_SQL as INBOUND_CLAIM_OWNER, DOMAIN_ENABLED_SQL as INBOUND_DOMAIN_ENABLED, MESSAGES_SQL as INBOUND_MESSAGES, SQL as INBOUND } from './inbound.js';
import { SQL as MESSAGES_BROADCASTS } from './messages-broadcasts.js';
import { SQL as QUEUE } from './queue.js';
import { SQL as STATS_ROLLUP } from './stats-rollup.js';
import { SQL as STATS_ROLLUP_PHASE } from './stats-rollup-phase.js';
import { SQL as STATS_ROLLUP_SIX_HOURS } from './stats-rollup-six-hours.js';
import { SQL as STAT_CHANGES } from './stat-changes.js';
import { SQL as TEMPLATES } from './templates.js';
import { SQL as WEBHOOKS_IDEMPOTENCY } from './webhooks-idempotency.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: [ACCOUNTS, CHANNELS_DOMAINS, MESSAGES_BROADCASTS, QUEUE, EVENTS_STATS, WEBHOOKS_IDEMPOTENCY, DELIVERY_STATE].join('\n'),
  },
  {
    // Issue 33: databases created by the release before inbound routes were at version 1.
    version: 2,
    name: 'inbound routes and received messages',
    sql: [INBOUND, INBOUND_MESSAGES].join('\n'),
  },
  {
    // Issue 34: stored templates with versions.
    version: 3,
    name: 'stored templates',
    sql: TEMPLATES,
  },
  {
    // Issue 36: the statistics rollup of hours and days, filled from the counters already there.
    version: 4,
    name: 'statistics rollup',
    sql: STATS_ROLLUP,
  },
  {
    // Issue 36: the rollup's records by their time of the UTC day, for series in zones off UTC.
    version: 5,
    name: 'statistics rollup by time of day',
    sql: STATS_ROLLUP_PHASE,
  },
  {
    // Issue 36: the statistics change marks, for the nodes' caches of closed buckets.
    version: 6,
    name: 'statistics change marks',
    sql: STAT_CHANGES,
  },
  {
    // Issue 36: the rollup's six-hour level, so a day edge in any zone reads a few records.
    version: 7,
    name: 'statistics rollup of six hours',
    sql: STATS_ROLLUP_SIX_HOURS,
  },
  {
    // A received message's claim names its node, whose start gives it back at once.
    version: 8,
    name: 'inbound claim owner',
    sql: INBOUND_CLAIM_OWNER,
  },
  {
    // postmaster@ a routed domain goes to the domain's oldest enabled route (RFC 5321 4.5.1).
    version: 9,
    name: 'inbound routes enabled by domain',
    sql: INBOUND_DOMAIN_ENABLED,
  },
];
