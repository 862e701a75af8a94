/**
 * The identities TLS-RPT counts are summed by: one failure detail, one policy. The in-memory
 * recorder (tls-rpt/recorder.ts) and every store engine (store/lmdb/tls-rpt.ts) use the same ones, so a
 * flush merges into what the store has exactly as the recorder merged before it.
 */
import type { FailureCount, PolicyCounts } from './tls-rpt.js';

export function failureKey(f: FailureCount['failure']): string {
  return JSON.stringify([f.type, f.sendingMtaIp ?? '', f.receivingMxHostname, f.receivingIp ?? '', f.failureReasonCode ?? '']);
}

export function policyKey(p: PolicyCounts['policy']): string {
  return JSON.stringify([p.type, p.string ?? [], p.mxHost ?? '']);
}
