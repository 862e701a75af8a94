/**
 * Counts TLS results in memory between flushes. Delivery calls record() once per TLS session,
 * so it must cost no store write: results are summed here by UTC day, policy domain, policy
 * and failure detail, and drain() hands the sums to one store write (TlsRptPort.addCounts). What
 * is drained is gone from here; a caller whose write fails puts it back with restore().
 */
import { normalizeName } from '../dns/resolver.js';
import { failureKey, policyKey } from '../domain/tls-rpt-keys.js';
import type { FailureCount, PolicyCounts, TlsFailure, TlsResultInput } from '../domain/tls-rpt.js';

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export class TlsRptRecorder {
  private entries = new Map<string, Entry>();

  /** Policy-domain/policy/day combinations waiting for the next flush. */
  get size(): number {
    return this.entries.size;
  }

  record(input: TlsResultInput, atMs: number): void {
    const e = this.entry(utcDay(atMs), input.policyDomain, input.policy);
    if (input.result === 'success') e.success++;
    else addFailure(e.byFailure, copyFailure(input.result), 1);
  }

  /** Everything counted since the last drain, and nothing is left here. */
  drain(): PolicyCounts[] {
    const out = [...this.entries.values()].map(({ byFailure, ...c }) => ({ ...c, failures: [...byFailure.values()] }));
    this.entries = new Map();
    return out;
  }

  /** Puts back a drained batch whose write failed, so the next flush carries it. */
  restore(batch: readonly PolicyCounts[]): void {
    for (const c of batch) {
      const e = this.entry(c.day, c.policyDomain, c.policy);
      e.success += c.success;
      for (const f of c.failures) addFailure(e.byFailure, f.failure, f.count);
    }
  }

  private entry(day: string, domain: string, policy: TlsResultInput['policy']): Entry {
    const policyDomain = normalizeName(domain);
    const p = copyPolicy(policy);
    const key = `${day} ${policyDomain} ${policyKey(p)}`;
    let e = this.entries.get(key);
    if (!e) {
      e = { day, policyDomain, policy: p, success: 0, failures: [], byFailure: new Map() };
      this.entries.set(key, e);
    }
    return e;
  }
}

type Entry = PolicyCounts & { byFailure: Map<string, FailureCount> };

function addFailure(byFailure: Map<string, FailureCount>, failure: TlsFailure, n: number): void {
  const key = failureKey(failure);
  const have = byFailure.get(key);
  if (have) have.count += n;
  else byFailure.set(key, { failure, count: n });
}

/** Copies only the known fields, so a caller's object is neither kept nor written as is. */
function copyPolicy(p: TlsResultInput['policy']): TlsResultInput['policy'] {
  return { type: p.type, ...(p.string && { string: [...p.string] }), ...(p.mxHost && { mxHost: p.mxHost.toLowerCase() }) };
}

function copyFailure(f: TlsFailure): TlsFailure {
  return {
    type: f.type,
    ...(f.sendingMtaIp && { sendingMtaIp: f.sendingMtaIp }),
    ...(f.receivingMxHostname && { receivingMxHostname: f.receivingMxHostname.toLowerCase().replace(/\.$/, '') }),
    ...(f.receivingIp && { receivingIp: f.receivingIp }),
    ...(f.failureReasonCode && { failureReasonCode: f.failureReasonCode.slice(0, 200) }),
  };
}
