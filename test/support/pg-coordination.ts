/**
 * PostgreSQL coordinations for the tests of test/postgres/coordination-*.pg.test.ts: nodes of
 * one cluster on a fresh schema of the run's throw-away server (POSTRIDER_TEST_PG_URL), each
 * its own PostgresCoordination as a daemon's, and an admin connection to look at (or lock) the
 * rows; dispose() stops them all and drops the schemas.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { Clock } from '../../src/queue/clock.js';
import { PostgresCoordination, type PostgresCoordinationOptions } from '../../src/coordination/postgres/index.js';

export function pgUrl(): string {
  const url = process.env.POSTRIDER_TEST_PG_URL;
  if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');
  return url;
}

export class PgCluster {
  readonly admin: postgres.Sql;
  private readonly started: PostgresCoordination[] = [];
  private readonly schemas = new Set<string>();
  private seq = 0;

  constructor(readonly url = pgUrl()) {
    this.admin = postgres(url, { max: 2, onnotice: false });
  }

  freshSchema(): string {
    const s = `coordpg_${randomBytes(5).toString('hex')}`;
    this.schemas.add(s);
    return s;
  }

  /** A started node on `schema`, on `clock` when given (else the database's clock and real timers). */
  async node(schema: string, clock?: Clock, o: Partial<PostgresCoordinationOptions> = {}): Promise<PostgresCoordination> {
    const c = new PostgresCoordination({ url: this.url, schema, nodeId: `node-${++this.seq}`, clock, poolSize: 2, syncTimeoutMs: 10_000, ...o });
    this.started.push(c);
    await c.start();
    return c;
  }

  async dispose(): Promise<void> {
    await Promise.all(this.started.map((c) => c.stop()));
    for (const s of this.schemas) await this.admin.unsafe(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await this.admin.end({ timeout: 5 });
  }
}
