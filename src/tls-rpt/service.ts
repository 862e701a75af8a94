/**
 * TLS-RPT (RFC 8460) for outbound delivery: counts TLS results per UTC day, policy domain and
 * policy, and after each day sends every policy domain that publishes a `_smtp._tls` TXT record
 * its aggregate report.
 *
 * Recording is in memory (tls-rpt/recorder.ts) and flushed to the store (TlsRptPort) every
 * flush interval (a minute) and at stop: delivery records once per TLS session and must not pay a
 * store write for it. A clean stop loses nothing; a crash loses at most the results of the last
 * flush interval, which for an aggregate of a whole day is noise.
 *
 * The daily job runs at the first tick after midnight UTC plus a delay (5 to 65 minutes, chosen
 * at random once per start, so that senders do not all hit a report receiver at 00:00): for each
 * past day with counts and no report yet it looks up `_smtp._tls.<domain>`, builds and gzips the
 * report and stores it with its rua URIs; due reports are then delivered: https: by POST
 * (tls-rpt/poster.ts), mailto: as a message through submission (tls-rpt/mailer.ts, RFC 8460
 * 5.3) from tlsRpt.reportChannelId and tlsRpt.reportFrom, counted as sent once submission
 * accepted it (delivery retries it from there like any message). A failed POST or refused
 * submission is retried after 15 min, 1 h, 3 h and 6 h, then given up with a warning; an address
 * that can never take the report (a malformed mailto:, a suppressed recipient) and mailto:
 * without the two settings are logged at warn and dropped. Counts and reports older than
 * tlsRpt.keepDays are removed.
 *
 * Counting and its flush are per node (each node adds its counts to the store). Making,
 * delivering and removing reports is done by one node at a time: the coordination's
 * 'tls-rpt-reports' leadership, renewed after each report and given up at the end of the run; a
 * node that does not lead only flushes. On one node the lease is always this service's.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { runAsLeader } from '../coordination/leader.js';
import type { Coordination, Lease } from '../coordination/port.js';
import type { DnsAnswer } from '../dns/resolver.js';
import type { Logger } from '../log/logger.js';
import type { Clock, Timer } from '../queue/clock.js';
import { systemClock } from '../queue/clock.js';
import type { TlsRptReport } from '../store/port/delivery-state.js';
import type { StorePort } from '../store/port/index.js';
import type { AddressLookups } from '../webhooks/targets.js';
import { ReportMailer, type MailedReport, type ReportSubmission } from './mailer.js';
import { ReportPoster } from './poster.js';
import { TlsRptRecorder, utcDay } from './recorder.js';
import { buildReport, gzipReport } from './report.js';
import { parseTlsRptRecords } from './txt.js';
import type { TlsResultInput } from '../domain/tls-rpt.js';

export interface TlsRptConfig {
  enabled: boolean;
  /** RFC 8460 4.4 organization-name; '' for the hostname. */
  organizationName: string;
  /** RFC 8460 4.4 contact-info; '' for postmaster@<hostname>. */
  contactInfo: string;
  keepDays: number;
  allowPrivate: boolean;
  caFile: string;
  /** The channel mailto: reports are submitted on; '' (or absent): mailto: rua addresses get none. */
  reportChannelId?: string;
  /** Their From address, on a verified domain of that channel. */
  reportFrom?: string;
}

export interface TlsRptOptions {
  store: StorePort;
  resolver: AddressLookups & { txt(name: string): Promise<DnsAnswer<string[]>> };
  config: TlsRptConfig;
  hostname: string;
  /** The node's coordination: the daily reports' work takes the 'tls-rpt-reports' leadership. */
  coordination: Pick<Coordination, 'lead'>;
  logger: Logger;
  /** The submission verbs mailto: reports go through (daemon.ts passes the Submission). */
  submission?: ReportSubmission;
  clock?: Clock;
  flushIntervalMs?: number;
  /** Time after midnight UTC before the day's reports are made; default 5 to 65 minutes, random. */
  reportDelayMs?: number;
  /** Delays before the 2nd, 3rd, ... attempt of a report's delivery. */
  retryDelaysMs?: number[];
  postTimeoutMs?: number;
}

const DAY_MS = 86_400_000;
/** Combinations held in memory before a flush is brought forward. */
const MAX_PENDING = 10_000;
const MAILTO_UNCONFIGURED =
  'TLS-RPT: mailto: report addresses are not supported until tlsRpt.reportChannelId and tlsRpt.reportFrom are set (a channel and a From address on its verified domain); report not sent there';

/** What became of a report at one rua, with the log line to write (a failure to retry has one of its own). */
type RuaOutcome = { ok: true; detail: object; message: string } | { ok: false; error: string; retry: boolean; message?: string };

/** The leadership's ttl: above one report's making or delivery (a DNS lookup, a POST under postTimeoutMs), renewed after each. */
const LEAD_TTL_MS = 10 * 60_000;

const DEFAULT_RETRY_DELAYS_MS = [15 * 60_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000];

export class TlsRptService {
  private readonly recorder = new TlsRptRecorder();
  private readonly clock: Clock;
  private readonly flushIntervalMs: number;
  private readonly reportDelayMs: number;
  private readonly retryDelaysMs: number[];
  private poster: ReportPoster | null = null;
  /** null: mailto: is not configured (tlsRpt.reportChannelId, tlsRpt.reportFrom). */
  private readonly mailer: ReportMailer | null;
  private timer: Timer | null = null;
  private running: Promise<void> | null = null;
  private flushing: Promise<void> | null = null;
  /** The UTC day whose preceding days have all been looked at. */
  private reportedUpTo: string | null = null;

  constructor(private readonly opts: TlsRptOptions) {
    this.clock = opts.clock ?? systemClock();
    this.flushIntervalMs = opts.flushIntervalMs ?? 60_000;
    this.reportDelayMs = opts.reportDelayMs ?? 5 * 60_000 + Math.floor(Math.random() * 3_600_000);
    this.retryDelaysMs = opts.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    const { reportChannelId: channelId, reportFrom: from, organizationName } = opts.config;
    this.mailer =
      channelId && from && opts.submission
        ? new ReportMailer({ store: opts.store, submission: opts.submission, channelId, from, hostname: opts.hostname, organizationName: organizationName || opts.hostname })
        : null;
  }

  /** Reads the CA file now, so a wrong path stops the start instead of every report. */
  async start(): Promise<void> {
    if (!this.opts.config.enabled || this.poster) return;
    const { caFile, allowPrivate } = this.opts.config;
    this.poster = new ReportPoster({ resolver: this.opts.resolver, allowPrivate, extraCa: caFile ? fs.readFileSync(caFile, 'utf8') : undefined, timeoutMs: this.opts.postTimeoutMs });
    // The channel and its domains may be fixed through the API while we run: a warning, not a stop.
    for (const problem of (await this.mailer?.problems()) ?? []) {
      this.opts.logger.warn({ problem }, `TLS-RPT: reports to mailto: addresses will be refused: ${problem}`);
    }
    this.schedule();
  }

  /** Waits for the run in flight, then writes what is still in memory. */
  async stop(): Promise<void> {
    if (!this.poster) return;
    this.timer?.cancel();
    this.timer = null;
    const poster = this.poster;
    this.poster = null;
    await this.running?.catch(() => undefined);
    await this.flush();
    poster.close();
  }

  /**
   * Counts one TLS session's result (RFC 8460 4.3) for delivery; no I/O, safe to call once
   * per attempt. Ignored while TLS-RPT is off or stopped.
   */
  recordTlsResult(input: TlsResultInput): void {
    if (!this.poster) return;
    this.recorder.record(input, this.clock.now());
    if (this.recorder.size >= MAX_PENDING) void this.flush();
  }

  /** Writes the counts held in memory in one store write; on failure they stay for the next flush. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    const batch = this.recorder.drain();
    if (batch.length === 0) return;
    this.flushing = this.opts.store.tlsRpt.addCounts(batch).catch((err: unknown) => {
      this.recorder.restore(batch);
      this.opts.logger.error({ err }, 'TLS-RPT counts could not be stored; kept for the next flush');
    });
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
  }

  /** One run of the periodic work at the clock's time: flush, make the due reports, deliver, remove old days. */
  runNow(): Promise<void> {
    const run = (this.running ?? Promise.resolve()).then(() => this.work());
    const tracked = run.catch((err: unknown) => this.opts.logger.error({ err }, 'TLS-RPT run failed'));
    this.running = tracked;
    return run;
  }

  /** Resolves when the run in flight (if any) is over. */
  async idle(): Promise<void> {
    await this.running;
  }

  private schedule(): void {
    this.timer = this.clock.setTimer(() => {
      this.timer = null;
      void this.runNow().catch(() => undefined).finally(() => {
        if (this.poster) this.schedule();
      });
    }, this.flushIntervalMs);
  }

  private async work(): Promise<void> {
    await this.flush();
    await runAsLeader(this.opts.coordination, 'tls-rpt-reports', LEAD_TTL_MS, (lease) => this.reportWork(lease));
  }

  /** The leader's part: make the due reports, deliver them, remove old days; stops when the lease is lost. */
  private async reportWork(lease: Lease): Promise<void> {
    const now = this.clock.now();
    const today = utcDay(now - this.reportDelayMs);
    if (this.reportedUpTo !== today) {
      if (await this.makeReports(today, now, lease)) this.reportedUpTo = today;
    }
    await this.deliverDue(now, lease);
    if (!(await lease.renew())) return;
    const removed = await this.opts.store.tlsRpt.removeBefore(utcDay(now - this.opts.config.keepDays * DAY_MS));
    if (removed > 0) this.opts.logger.debug({ removed }, 'TLS-RPT: old counts and reports removed');
  }

  /** Makes the reports of days before `today`; false when a DNS failure leaves some for the next run. */
  private async makeReports(today: string, now: number, lease: Lease): Promise<boolean> {
    let complete = true;
    for (const { day, policyDomain } of await this.opts.store.tlsRpt.unreportedDays(today)) {
      if (!this.poster || !(await lease.renew())) return false;
      const txt = await this.opts.resolver.txt(`_smtp._tls.${policyDomain}`);
      if (txt.status === 'error') {
        this.opts.logger.warn({ policyDomain, day, error: txt.error }, 'TLS-RPT: _smtp._tls lookup failed; tried again at the next run');
        complete = false;
        continue;
      }
      const rua = parseTlsRptRecords(txt.status === 'ok' ? txt.records : []);
      if (!rua.ok) {
        this.opts.logger.info({ policyDomain, day, reason: rua.reason }, 'TLS-RPT: the domain takes no reports; none sent');
        await this.opts.store.tlsRpt.createReport(day, policyDomain, { reportId: '', gzip: new Uint8Array(0), pending: [], attempts: 0, nextAtMs: now });
        continue;
      }
      const report = await this.build(day, policyDomain);
      // Insert-if-absent: a day's report made meanwhile by another run is kept, not replaced.
      await this.opts.store.tlsRpt.createReport(day, policyDomain, { ...report, pending: rua.rua, attempts: 0, nextAtMs: now });
    }
    return complete;
  }

  private async build(day: string, policyDomain: string): Promise<{ reportId: string; gzip: Uint8Array }> {
    const { organizationName, contactInfo } = this.opts.config;
    const hostname = this.opts.hostname;
    // RFC 8460 4.4: report-id is unique; it also names the report in the mailto Subject (5.3).
    const reportId = `${day}_${policyDomain}_${randomUUID()}`;
    const meta = { organizationName: organizationName || hostname, contactInfo: contactInfo || `postmaster@${hostname}`, reportId, day, policyDomain };
    return { reportId, gzip: gzipReport(buildReport(meta, await this.opts.store.tlsRpt.counts(day, policyDomain))) };
  }

  /** Delivers the due reports, until stopped or the lease is lost. */
  private async deliverDue(now: number, lease: Lease): Promise<void> {
    for (const { day, policyDomain, report } of await this.opts.store.tlsRpt.dueReports(now)) {
      const poster = this.poster;
      if (!poster || !(await lease.renew())) return;
      const log = { policyDomain, day, reportId: report.reportId };
      const pending: string[] = [];
      for (const uri of report.pending) {
        const r = await this.deliverTo(poster, uri, { day, policyDomain, reportId: report.reportId, gzip: report.gzip });
        if (r.ok) {
          this.opts.logger.info({ ...log, rua: uri, ...r.detail }, r.message);
        } else if (r.retry) {
          pending.push(uri);
          this.opts.logger.warn({ ...log, rua: uri, error: r.error, attempt: report.attempts + 1 }, 'TLS-RPT report delivery failed');
        } else {
          this.opts.logger.warn({ ...log, rua: uri, error: r.error }, r.message ?? 'TLS-RPT report not sent there');
        }
      }
      await this.opts.store.tlsRpt.updateReport(day, policyDomain, this.next(report, pending, now, log));
    }
  }

  /** One rua: https: by POST, mailto: through submission; retry false drops the address. */
  private async deliverTo(poster: ReportPoster, uri: string, report: MailedReport): Promise<RuaOutcome> {
    if (/^mailto:/i.test(uri)) {
      if (!this.mailer) {
        return { ok: false, retry: false, error: 'tlsRpt.reportChannelId and tlsRpt.reportFrom are not set', message: MAILTO_UNCONFIGURED };
      }
      const r = await this.mailer.send(uri, report);
      if (r.ok) return { ok: true, detail: { messageId: r.messageId }, message: 'TLS-RPT report accepted for delivery by mail' };
      return r.retry ? r : { ...r, message: 'TLS-RPT: report not sent to this mailto: address; it cannot take it' };
    }
    const r = await poster.post(uri, report.gzip);
    return r.ok ? { ok: true, detail: {}, message: 'TLS-RPT report delivered' } : { ...r, retry: true };
  }

  /** The report after an attempt: pending URIs retried after the next delay, or given up after the last. */
  private next(report: TlsRptReport, pending: string[], now: number, log: object): TlsRptReport {
    const attempts = report.attempts + 1;
    if (pending.length > 0 && attempts > this.retryDelaysMs.length) {
      this.opts.logger.warn({ ...log, rua: pending, attempts }, 'TLS-RPT report given up: not delivered after the last retry');
      return { ...report, pending: [], attempts };
    }
    return { ...report, pending, attempts, nextAtMs: pending.length > 0 ? now + this.retryDelaysMs[attempts - 1] : report.nextAtMs };
  }
}
