/** The LMDB engine's LmdbTlsRpt: the port's verbs over the functions of store/lmdb/. */
import type { PolicyCounts } from '../../../domain/tls-rpt.js';
import type { TlsRptDay, TlsRptPort, TlsRptReport } from '../../port/delivery-state.js';
import type { Store } from '../env.js';
import {
  addTlsRptCounts,
  createTlsRptReport,
  dueTlsRptReports,
  removeTlsRptBefore,
  saveTlsRptReport,
  tlsRptCounts,
  tlsRptReport,
  unreportedTlsRptDays,
} from '../tls-rpt.js';

export class LmdbTlsRpt implements TlsRptPort {
  constructor(private readonly store: Store) {}

  addCounts(batch: readonly PolicyCounts[]): Promise<void> {
    return addTlsRptCounts(this.store, batch);
  }

  async counts(day: string, policyDomain: string): Promise<PolicyCounts[]> {
    return tlsRptCounts(this.store, day, policyDomain);
  }

  async unreportedDays(beforeDay: string): Promise<TlsRptDay[]> {
    return unreportedTlsRptDays(this.store, beforeDay);
  }

  createReport(day: string, policyDomain: string, report: TlsRptReport): Promise<boolean> {
    return createTlsRptReport(this.store, day, policyDomain, report);
  }

  updateReport(day: string, policyDomain: string, report: TlsRptReport): Promise<void> {
    return saveTlsRptReport(this.store, day, policyDomain, report);
  }

  async report(day: string, policyDomain: string): Promise<TlsRptReport | undefined> {
    return tlsRptReport(this.store, day, policyDomain);
  }

  async dueReports(nowMs: number): Promise<Array<TlsRptDay & { report: TlsRptReport }>> {
    return dueTlsRptReports(this.store, nowMs);
  }

  removeBefore(beforeDay: string): Promise<number> {
    return removeTlsRptBefore(this.store, beforeDay);
  }
}
