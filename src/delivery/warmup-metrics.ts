/**
 * The warm-up gauges' source (log/metrics.ts WarmupSnapshot): each warming source's view
 * (warmup-view.ts) cut to what labels may carry, the providers of the table; the sites outside
 * it, one count each, stay in GET /ops/sources.
 */
import type { WarmupSnapshot } from '../log/metrics.js';
import type { SourceGate } from './source-gates.js';
import { WARMUP_GATE, WarmupGate } from './warmup-gate.js';

export async function warmupSnapshots(gates: readonly SourceGate[], now: number): Promise<WarmupSnapshot[]> {
  const gate = gates.find((g): g is WarmupGate => g.name === WARMUP_GATE && g instanceof WarmupGate);
  if (!gate) return [];
  const out: WarmupSnapshot[] = [];
  for (const source of gate.sources) {
    const view = await gate.view(source, now);
    if (!view) continue;
    const providers = view.sites.filter((s) => s.curve === s.key).map((s) => ({ provider: s.key, sentToday: s.today.sent, capToday: s.today.cap }));
    out.push({ source, day: view.day, providers });
  }
  return out;
}
