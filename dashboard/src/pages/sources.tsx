import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { SummaryList } from '../components/summary-list';
import { useApi } from '../use-api';
import { PoolsSummary } from './sources-pools';
import { HealthBadge, ShapingSection, WarmupSection } from './sources-sections';
import type { OpsSources, SourceJson, SourcePtrJson } from '../wire';

/** How often the page reads GET /ops/sources again (warm-up counts, shaping and health change as mail goes). */
const REFRESH_MS = 5_000;

/**
 * GET /ops/sources (issue 35): each sending source with its address, EHLO name, rate, pools and
 * reverse DNS check, and each gate's part (warm-up, shaping, health) when the daemon gives one;
 * then the pools. An operator route: it answers the dashboard on the daemon's own host, or an
 * account named in metrics.operatorAccounts; another account gets the 403's explanation.
 */
export function SourcesPage() {
  const loaded = useApi(() => api.get<OpsSources>('/ops/sources'), []);
  const [fresh, setFresh] = useState<OpsSources | null>(null);
  const [version, setVersion] = useState(0);
  const data = fresh ?? loaded.data;
  useEffect(() => {
    if (!data) return;
    const timer = window.setTimeout(() => api.get<OpsSources>('/ops/sources').then(setFresh, () => setVersion((n) => n + 1)), REFRESH_MS);
    return () => window.clearTimeout(timer);
  }, [data, version]);
  const reloadNow = () => void api.get<OpsSources>('/ops/sources').then(setFresh, () => undefined);
  return (
    <>
      <PageHeader
        title="Sources"
        description={<>The addresses mail leaves from, each with its EHLO name, pools and reverse DNS, and what holds it back now. Refreshes every {REFRESH_MS / 1000} s.</>}
      />
      <ProblemBanner error={loaded.error} />
      {!data && !loaded.error && <p class="muted">Loading…</p>}
      {data && (
        <ul class="source-list" aria-label="Sending sources">
          {data.results.map((s) => (
            <li key={s.name}>
              <SourceCard s={s} onChange={reloadNow} />
            </li>
          ))}
        </ul>
      )}
      {data && <PoolsSummary data={data} error={null} />}
    </>
  );
}

function SourceCard(props: { s: SourceJson; onChange: () => void }) {
  const { s } = props;
  const id = `source-${s.name}`;
  return (
    <article class="source-card" aria-labelledby={id}>
      <header class="source-head">
        <h2 id={id}>{s.name}</h2>
        <HealthBadge raw={s.health} />
      </header>
      <SummaryList
        rows={[
          ['Address', <Address s={s} />],
          ['EHLO name', <code>{s.ehloName}</code>],
          ['Rate', s.rate === null ? <span class="muted">no own rate (delivery.rate holds)</span> : `${s.rate.toLocaleString()} messages/s`],
          ['Pools', s.pools.map((p) => `${p.pool} (weight ${p.weight})`).join(', ') || <span class="muted">none</span>],
          ['Reverse DNS', <ReverseDns ptr={s.ptr} ehloName={s.ehloName} />],
        ]}
      />
      <WarmupSection source={s.name} raw={s.warmup} />
      <ShapingSection source={s.name} raw={s.shaping} onChange={props.onChange} />
    </article>
  );
}

function Address(props: { s: SourceJson }) {
  if (props.s.address !== null) return <code>{props.s.address}</code>;
  return (
    <>
      kernel's choice
      <small class="muted source-hint">No delivery.sources: the system picks the address of each connection. README, "Sending IPs", says how to send from addresses of your own.</small>
    </>
  );
}

const PTR_WORDS: Record<SourcePtrJson['status'], { word: string; tone: 'good' | 'bad' | 'warn' | 'neutral' }> = {
  confirmed: { word: 'confirmed', tone: 'good' },
  no_ptr: { word: 'no PTR record', tone: 'bad' },
  ptr_mismatch: { word: 'PTR names another host', tone: 'bad' },
  forward_mismatch: { word: 'name does not resolve back', tone: 'bad' },
  dns_error: { word: 'could not be looked up', tone: 'warn' },
  not_checked: { word: 'not checked', tone: 'neutral' },
};

/** The FCrDNS check: a badge, the PTR names, and what is wrong in words. */
function ReverseDns(props: { ptr: SourcePtrJson; ehloName: string }) {
  const { ptr } = props;
  const w = PTR_WORDS[ptr.status] ?? { word: ptr.status, tone: 'neutral' };
  return (
    <span class="source-ptr">
      <span class={`badge badge-${w.tone}`}>{w.word}</span> <PtrDetail ptr={ptr} ehloName={props.ehloName} />
    </span>
  );
}

function PtrDetail(props: { ptr: SourcePtrJson; ehloName: string }) {
  const { ptr, ehloName } = props;
  const names = ptr.ptrNames.join(', ');
  switch (ptr.status) {
    case 'confirmed':
      return <span>PTR {names}, which resolves back to the address</span>;
    case 'no_ptr':
      return <span class="muted">Publish a PTR record naming {ehloName}: receivers refuse or junk mail from an address without one.</span>;
    case 'ptr_mismatch':
      return <span>PTR {names}, not the EHLO name {ehloName}</span>;
    case 'forward_mismatch':
      return (
        <span>
          PTR {names}, but {ehloName} resolves to {ptr.forwardAddresses.join(', ') || 'nothing'}
        </span>
      );
    case 'not_checked':
      return <span class="muted">no address of its own</span>;
    default:
      return <span class="muted">DNS did not answer; the next refresh asks again</span>;
  }
}
