/** The LMDB engine's LmdbSessions: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { DashboardSessionsPort } from '../../port/index.js';
import type { DashboardSession } from '../../port/accounts.js';
import {
  createDashboardSession,
  findDashboardSession,
  removeDashboardSession,
  sweepDashboardSessions,
  touchDashboardSession,
} from '../dashboard-sessions.js';

export class LmdbSessions implements DashboardSessionsPort {
  constructor(private readonly store: Store) {}

  create(input: { keyId: string; accountId: string; nowMs: number; lifetimeMs: number }): Promise<{ token: string; session: DashboardSession }> {
    return createDashboardSession(this.store, input, input.nowMs, input.lifetimeMs);
  }

  async findByToken(token: string): Promise<{ id: string; session: DashboardSession } | undefined> {
    return findDashboardSession(this.store, token);
  }

  touch(id: string, nowMs: number): Promise<void> {
    return touchDashboardSession(this.store, id, nowMs);
  }

  remove(id: string): Promise<void> {
    return removeDashboardSession(this.store, id);
  }

  sweep(input: { nowMs: number; idleMs: number }): Promise<number> {
    return sweepDashboardSessions(this.store, input);
  }
}
