import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { focusPageTitle } from '../components/focus';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatTiles } from '../components/stat-tiles';
import { StatusBadge } from '../components/status-badge';
import { useAction } from '../components/use-action';
import { Link } from '../router';
import { useApi } from '../use-api';
import { BroadcastFailures, BroadcastSuppressed } from './broadcasts-lists';
import type { BroadcastDetail } from '../wire';
import { cancelable, percentOf, running } from './broadcasts-types';
import { formatAddress } from './message-types';

/** How often a running broadcast's page asks again (GET /broadcasts/{id} reads counters, no scan). */
const REFRESH_MS = 2_000;

/**
 * GET /broadcasts/{id}: status, progress (a bar with the same numbers as text), counts and
 * statistics, refreshed while it runs; its failures and suppressed recipients; cancel
 * (POST /broadcasts/{id}/cancel) after a ConfirmDialog.
 */
export function BroadcastPage(props: { id: string }) {
  const path = `/broadcasts/${encodeURIComponent(props.id)}`;
  const [fresh, setFresh] = useState<BroadcastDetail | null>(null);
  const loaded = useApi(() => api.get<BroadcastDetail>(path), [path]);
  const b = fresh ?? loaded.data;
  // Failed refreshes (daemon restarting, session ended): each schedules the next, so the page keeps refreshing.
  const [misses, setMisses] = useState(0);
  useEffect(() => {
    if (!b || !running(b.status)) return;
    const timer = window.setTimeout(() => api.get<BroadcastDetail>(path).then(setFresh, () => setMisses((n) => n + 1)), REFRESH_MS);
    return () => window.clearTimeout(timer);
  }, [b, path, misses]);
  return (
    <>
      <PageHeader
        title={b ? b.subject || '(no subject)' : 'Broadcast'}
        description={
          <>
            <Link to="/broadcasts">Broadcasts</Link> / <code>{props.id}</code>
          </>
        }
        actions={b && cancelable(b.status) ? <CancelButton path={path} onCanceled={setFresh} /> : undefined}
      />
      <ProblemBanner error={loaded.error} />
      {!b && !loaded.error && <p class="muted">Loading…</p>}
      {b && <BroadcastProgress b={b} />}
      {b && <BroadcastContent b={b} />}
      {b && <BroadcastFailures path={path} total={b.failed} version={b.failed} />}
      {b && <BroadcastSuppressed path={path} total={b.suppressed} version={b.suppressed} />}
    </>
  );
}

function BroadcastProgress(props: { b: BroadcastDetail }) {
  const { b } = props;
  const pct = percentOf(b.completion);
  const s = b.statistics;
  return (
    <section aria-labelledby="progress-title">
      <h2 id="progress-title">Progress</h2>
      <p>
        <StatusBadge status={b.status} /> created <RelativeTime at={b.createdAt} />, from <code>{b.content.from.email}</code>
        {b.scheduledAt && (
          <>
            , {b.status === 'scheduled' ? 'sends' : 'scheduled'} <RelativeTime at={b.scheduledAt} />
          </>
        )}
        {running(b.status) && <span class="muted"> · refreshes every {REFRESH_MS / 1000} s</span>}
      </p>
      <div class="progress-block">
        <label for="broadcast-progress">
          {b.completion} of {b.messages.toLocaleString()} messages handled (delivered, bounced, failed, suppressed or canceled)
        </label>
        <progress id="broadcast-progress" max={100} value={pct}>
          {b.completion}
        </progress>
      </div>
      <StatTiles
        items={[
          { label: 'messages', value: b.messages },
          { label: 'sent', value: s.sent },
          { label: 'delivered', value: s.delivered },
          { label: 'bounced', value: s.bounced },
          { label: 'failed', value: b.failed },
          { label: 'suppressed', value: b.suppressed },
          { label: 'canceled', value: b.canceled },
          { label: 'opened', value: s.opened },
          { label: 'clicked', value: s.clicked },
        ]}
      />
    </section>
  );
}

function CancelButton(props: { path: string; onCanceled: (b: BroadcastDetail) => void }) {
  const [open, setOpen] = useState(false);
  const cancel = useAction();
  const confirm = async () => {
    const b = await cancel.run(() => api.post<BroadcastDetail>(`${props.path}/cancel`));
    if (b) (setOpen(false), props.onCanceled(b), focusPageTitle());
  };
  return (
    <>
      <button type="button" class="button button-danger" onClick={() => (cancel.clear(), setOpen(true))}>
        Cancel broadcast
      </button>
      <ConfirmDialog open={open} title="Cancel this broadcast?" confirmLabel="Cancel broadcast" danger busy={cancel.busy} onConfirm={confirm} onCancel={() => setOpen(false)}>
        <ProblemBanner error={cancel.error} />
        <p>Messages not yet sent are taken out of the queue and the rest of the list is not expanded. A delivery under way finishes. This cannot be undone.</p>
      </ConfirmDialog>
    </>
  );
}

/** What was sent: the common part of every message (GET /broadcasts/{id} content and tracking). */
function BroadcastContent(props: { b: BroadcastDetail }) {
  const { content, tracking } = props.b;
  const on = (v: boolean) => (v ? 'on' : 'off');
  return (
    <section aria-labelledby="content-title">
      <h2 id="content-title">Content</h2>
      <dl class="facts">
        <dt>From</dt>
        <dd>{formatAddress(content.from)}</dd>
        {content.replyTo && content.replyTo.length > 0 && (
          <>
            <dt>Reply to</dt>
            <dd>{content.replyTo.map(formatAddress).join(', ')}</dd>
          </>
        )}
        <dt>Subject template</dt>
        <dd>
          <code>{content.template.subject}</code>
        </dd>
        <dt>Parts</dt>
        <dd>{[content.template.html !== undefined && 'HTML', content.template.text !== undefined && 'text'].filter(Boolean).join(' and ') || '—'}</dd>
        <dt>Tracking</dt>
        <dd>
          links {on(tracking.links)}, opens {on(tracking.opens)}
        </dd>
        <dt>Tags</dt>
        <dd>{content.tags.length ? content.tags.join(', ') : '—'}</dd>
        <dt>Attachments</dt>
        <dd>{content.attachments.length ? content.attachments.map((a) => `${a.fileName} (${a.size.toLocaleString()} bytes)`).join(', ') : '—'}</dd>
      </dl>
    </section>
  );
}
