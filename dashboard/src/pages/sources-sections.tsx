import { api } from '../api';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { useAction } from '../components/use-action';
import { healthOf, shapingOf, warmupOf, type HealthState, type Instant, type WarmupSite } from './sources-gates';

/** An instant of a gate (epoch ms or ISO) as the ISO string RelativeTime takes. */
function iso(at: Instant | undefined): string | undefined {
  return at === undefined ? undefined : new Date(at).toISOString();
}

/** "12 of 50", "12 sent" (no cap: unlimited), or nothing known. */
function sentOf(sent: number | undefined, cap: number | undefined): string {
  if (cap !== undefined) return `${(sent ?? 0).toLocaleString()} of ${cap.toLocaleString()}`;
  return sent === undefined ? '—' : `${sent.toLocaleString()} sent, no cap`;
}

/**
 * The health gate's part: a badge (ok / out) with, when out, until when and why. The word is the
 * gate's own; "ok" is good, anything else a warning, so a new word still reads as "look here".
 */
export function HealthBadge(props: { raw: unknown }) {
  const h = healthOf(props.raw);
  if (!h) return null;
  const ok = h.status === 'ok';
  return (
    <span class="source-health">
      <span class={`badge badge-${ok ? 'good' : 'bad'}`}>{ok ? 'ok' : h.status}</span>
      {!ok && <HealthDetail h={h} />}
    </span>
  );
}

function HealthDetail(props: { h: HealthState }) {
  const { h } = props;
  return (
    <span class="muted">
      {h.until !== undefined && (
        <>
          {' '}
          until <RelativeTime at={iso(h.until)} />
        </>
      )}
      {h.reason && <>: {h.reason}</>}
      {h.consecutiveFailures !== undefined && <> ({h.consecutiveFailures} failed connections in a row)</>}
    </span>
  );
}

/** The warm-up gate's part: day n of N as a bar, and today's and this hour's messages per provider. */
export function WarmupSection(props: { source: string; raw: unknown }) {
  const w = warmupOf(props.raw);
  if (!w) return null;
  const id = `warmup-${props.source}`;
  const bar = w.day !== undefined && w.days !== undefined && w.days > 0;
  return (
    <section class="source-part" aria-labelledby={id}>
      <h3 id={id}>Warm-up</h3>
      {w.complete ? (
        <p>Warm: the plan is complete, no cap holds.</p>
      ) : bar ? (
        <div class="progress-block">
          <label for={`${id}-bar`}>
            Day {w.day} of {w.days}
            {w.start && <span class="muted"> (started {w.start})</span>}
          </label>
          <progress id={`${id}-bar`} max={w.days} value={Math.min(w.day!, w.days!)}>
            {w.day}
          </progress>
        </div>
      ) : (
        w.day !== undefined && <p>Day {w.day}</p>
      )}
      {w.sites.length > 0 && <WarmupSites source={props.source} sites={w.sites} />}
    </section>
  );
}

function WarmupSites(props: { source: string; sites: WarmupSite[] }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={`Warm-up caps of ${props.source}`}>
      <table>
        <caption class="visually-hidden">Warm-up caps of {props.source} per provider</caption>
        <thead>
          <tr>
            <th scope="col">Provider</th>
            <th scope="col" class="num">
              Today
            </th>
            <th scope="col" class="num">
              This hour
            </th>
          </tr>
        </thead>
        <tbody>
          {props.sites.map((s) => (
            <tr key={s.key}>
              <td>{s.key}</td>
              <td class="num">{sentOf(s.todaySent, s.todayCap)}</td>
              <td class="num">{sentOf(s.hourSent, s.hourCap)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The shaping gate's part: the changes in force for this source (site, rule, action, until),
 * each with Lift (DELETE /ops/sources/{source}/shaping/{site}), which ends it before it expires.
 */
export function ShapingSection(props: { source: string; raw: unknown; onChange: () => void }) {
  const entries = shapingOf(props.raw);
  const lift = useAction();
  if (!entries) return null;
  const id = `shaping-${props.source}`;
  const run = (site: string) =>
    lift.run(() => api.del(`/ops/sources/${encodeURIComponent(props.source)}/shaping/${encodeURIComponent(site)}`)).then(props.onChange);
  return (
    <section class="source-part" aria-labelledby={id}>
      <h3 id={id}>Shaping</h3>
      <ProblemBanner error={lift.error} />
      {entries.length === 0 ? (
        <p class="muted">No shaping rule holds this source back now.</p>
      ) : (
        <ul class="plain-list">
          {entries.map((e) => (
            <li key={e.site} class="shaping-entry">
              <span>
                <strong>{e.site}</strong>
                {e.rule && <> · rule <code>{e.rule}</code></>}
                {e.action && <> · {e.action}</>}
                {e.until !== undefined && (
                  <>
                    {' '}
                    · until <RelativeTime at={iso(e.until)} />
                  </>
                )}
              </span>
              <button type="button" class="button button-small" disabled={lift.busy} onClick={() => void run(e.site)} aria-label={`Lift the shaping of ${props.source} at ${e.site}`}>
                Lift
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
