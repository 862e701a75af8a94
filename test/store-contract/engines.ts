/**
 * The engines the store contract suite runs against. Each `*.contract.test.ts` file describes
 * the port's behaviour once, with eachEngine(). `npm test` runs it against LMDB; `npm run
 * test:pg` (POSTRIDER_TEST_PG_URL set by its global setup) against PostgreSQL, each test in a
 * fresh schema of the run's throw-away cluster.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachImplementation } from './each-implementation.js';

/** One open store of an engine, fresh and empty, and how to close and remove it. */
export interface OpenedStore {
  store: StorePort;
  /** Closes the store and opens the same data again (what a restart sees). */
  reopen(): Promise<StorePort>;
  /** Closes it and removes its data. */
  dispose(): Promise<void>;
}

export interface Engine {
  name: string;
  open(): Promise<OpenedStore>;
}

const lmdb: Engine = {
  name: 'lmdb',
  async open() {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-contract-'));
    let store = new LmdbStore({ dataDir });
    await store.start();
    return {
      store,
      async reopen() {
        await store.stop();
        store = new LmdbStore({ dataDir });
        await store.start();
        return store;
      },
      async dispose() {
        await store.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
};

/** A fresh schema per test (cheap, unlike a database per test); dropped at dispose. */
function postgresEngine(url: string): Engine {
  return {
    name: 'postgres',
    async open() {
      const schema = `contract_${randomBytes(6).toString('hex')}`;
      const make = () => new PostgresStore({ url, schema, poolSize: 4 });
      let store = make();
      await store.start();
      return {
        store,
        async reopen() {
          await store.stop();
          store = make();
          await store.start();
          return store;
        },
        async dispose() {
          await store.stop();
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

/** LMDB under `npm test`; PostgreSQL under `npm run test:pg`. */
export const ENGINES: readonly Engine[] = PG_URL ? [postgresEngine(PG_URL)] : [lmdb];

/**
 * Runs `body` once per engine, inside describe(`${title} [engine]`), with a fresh empty store
 * per test: `ctx.store` is the open store, `ctx.reopen()` closes and reopens the same data.
 */
export function eachEngine(title: string, body: (ctx: EngineContext) => void): void {
  eachImplementation(title, ENGINES, (engine) => new EngineContext(engine), body);
}

export class EngineContext {
  private opened: OpenedStore | null = null;
  private current: StorePort | null = null;

  constructor(readonly engine: Engine) {}

  get store(): StorePort {
    if (!this.current) throw new Error('the contract test has no open store (use it inside a test)');
    return this.current;
  }

  async open(): Promise<void> {
    this.opened = await this.engine.open();
    this.current = this.opened.store;
  }

  async reopen(): Promise<StorePort> {
    if (!this.opened) throw new Error('no open store');
    this.current = await this.opened.reopen();
    return this.current;
  }

  async dispose(): Promise<void> {
    await this.opened?.dispose();
    this.opened = null;
    this.current = null;
  }
}
