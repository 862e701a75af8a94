/**
 * The daemon: composes the components in dependency order and stops them in reverse. Knows
 * nothing about signals or argv (main.ts owns those), so tests run it in-process.
 */
import fs from 'node:fs';
import type { Config } from './config/schema.js';
import { bootstrapIfEmpty, type InitialCredentials } from './bootstrap.js';
import { channelRoutes } from './http/routes/channels.js';
import { HttpServer, type RouteModule } from './http/server.js';
import type { Logger } from './log/logger.js';
import { Store } from './store/env.js';

/** Anything with a lifecycle. Started in array order, stopped in reverse. */
export interface Component {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export class Daemon {
  readonly store: Store;
  readonly http: HttpServer;
  initialCredentials: InitialCredentials | null = null;
  private started: Component[] = [];

  constructor(
    readonly config: Config,
    readonly logger: Logger,
  ) {
    this.store = new Store({ dataDir: config.dataDir });
    const routes: RouteModule[] = [channelRoutes];
    this.http = new HttpServer({ config, store: this.store, logger }, routes);
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.config.dataDir, { recursive: true, mode: 0o700 });
    try {
      await this.startComponent(this.store);
      this.initialCredentials = await bootstrapIfEmpty(this.store, this.config.dataDir);
      await this.startComponent(this.http);
    } catch (err) {
      await this.stop();
      throw err;
    }
    this.logger.info({ http: `${this.config.http.host}:${this.http.port}` }, 'postrider started');
  }

  /** SIGHUP: reload what can change without a restart (the log level). */
  async reload(opts: { logLevel?: string } = {}): Promise<void> {
    if (opts.logLevel) this.logger.level = opts.logLevel;
  }

  async stop(): Promise<void> {
    const components = this.started.reverse();
    this.started = [];
    for (const c of components) {
      try {
        await c.stop();
      } catch (err) {
        this.logger.error({ err }, 'component failed to stop cleanly');
      }
    }
  }

  private async startComponent(c: Component): Promise<void> {
    await c.start();
    this.started.push(c);
  }
}
