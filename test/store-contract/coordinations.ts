/**
 * The implementations the coordination contract suite (coordination.contract.test.ts) runs
 * against, as engines.ts lists the store's engines. A cluster implementation (PostgreSQL, issue
 * 32) plugs in by adding one factory to COORDINATIONS: `nodes(n)` gives n coordinations that
 * share one backend as n daemons of one cluster would, on the test's fake clock (the factory
 * passes the clock's time to its queries instead of the database's now(), so the ttl tests
 * need no sleep).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { LocalCoordination } from '../../src/coordination/local.js';
import { PostgresCoordination } from '../../src/coordination/postgres/index.js';
import type { Coordination } from '../../src/coordination/port.js';
import { FakeClock } from '../support/fake-clock.js';
import { eachImplementation } from './each-implementation.js';

/** One backend of an implementation, fresh and empty. */
export interface OpenedCoordination {
  /** n users of the one backend (nodes of a cluster; the one process's components for local). */
  nodes(n: number): Coordination[];
  dispose(): Promise<void>;
}

export interface CoordinationImpl {
  name: string;
  open(clock: FakeClock): Promise<OpenedCoordination>;
}

/**
 * One process, one instance: every "node" is the same LocalCoordination, as the components of
 * one daemon share the one the composition root makes. The pacer and the keyed limits read
 * real time in production; here they read the fake clock's monotonic time.
 */
const local: CoordinationImpl = {
  name: 'local',
  async open(clock) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-coordination-'));
    const c = LocalCoordination.forDataDir(dataDir, { clock, realTime: () => clock.monotonic() });
    return {
      nodes: (n) => Array.from({ length: n }, () => c),
      async dispose() {
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
};

/** The most nodes a contract test asks for. */
const PG_NODES = 5;

/**
 * PG_NODES coordinations on one fresh schema, as the daemons of a cluster (each its own pool,
 * LISTEN connection and rate bridge), started at once (their tables are created once), on the
 * fake clock: its monotonic time is every query's now. A generous sync timeout: a loaded test
 * machine must not turn a slow round trip into "nothing granted".
 */
function postgresCoordination(url: string): CoordinationImpl {
  return {
    name: 'postgres',
    async open(clock) {
      const schema = `coord_${randomBytes(6).toString('hex')}`;
      const all = Array.from({ length: PG_NODES }, (_, i) => new PostgresCoordination({ url, schema, nodeId: `node-${i + 1}`, clock, poolSize: 2, syncTimeoutMs: 10_000 }));
      await Promise.all(all.map((c) => c.start()));
      return {
        nodes(n) {
          if (n > PG_NODES) throw new Error(`the postgres contract harness has ${PG_NODES} nodes, asked ${n}`);
          return all.slice(0, n);
        },
        async dispose() {
          await Promise.all(all.map((c) => c.stop()));
          const admin = postgres(url, { max: 1, onnotice: false });
          try {
            await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          } finally {
            await admin.end({ timeout: 5 });
          }
        },
      };
    },
  };
}

const PG_URL = process.env.POSTRIDER_TEST_PG_URL;

/** Local under `npm test`; PostgreSQL under `npm run test:pg` (as engines.ts chooses the store's engine). */
export const COORDINATIONS: readonly CoordinationImpl[] = PG_URL ? [postgresCoordination(PG_URL)] : [local];

/** The test's view: the fake clock and the nodes of a fresh backend. */
export class CoordinationContext {
  clock = new FakeClock();
  private opened: OpenedCoordination | null = null;

  constructor(readonly impl: CoordinationImpl) {}

  nodes(n: number): Coordination[] {
    if (!this.opened) throw new Error('the contract test has no open coordination (use it inside a test)');
    return this.opened.nodes(n);
  }

  /** One node. */
  get node(): Coordination {
    return this.nodes(1)[0]!;
  }

  async open(): Promise<void> {
    this.clock = new FakeClock();
    this.opened = await this.impl.open(this.clock);
  }

  async dispose(): Promise<void> {
    await this.opened?.dispose();
    this.opened = null;
  }
}

/** Runs `body` once per implementation, inside describe(`${title} [impl]`), with a fresh backend per test. */
export function eachCoordination(title: string, body: (ctx: CoordinationContext) => void): void {
  eachImplementation(title, COORDINATIONS, (impl) => new CoordinationContext(impl), body);
}
