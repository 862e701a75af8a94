import { useState } from 'preact/hooks';
import { request } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { DataTable } from '../components/data-table';
import { focusPageTitle } from '../components/focus';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { useAction } from '../components/use-action';
import { Link, useLocation } from '../router';
import { ReplyCell } from './queue-reply';
import { useQueueMessages } from './queue-messages';
import type { QueueJob, QueueMessage } from '../wire';

type Row = { m: QueueMessage; job: QueueJob | undefined };

/**
 * The row's state: its job's, or (every destination listed) preparing when the message is still
 * being composed and signed (all of its open jobs are then), else the message's status.
 */
function rowState(r: Row): string {
  if (r.job) return r.job.state === 'done' ? 'ended' : r.job.state;
  return r.m.destinations.some((j) => j.state === 'preparing') ? 'preparing' : r.m.status;
}

/**
 * A destination's waiting messages (GET /queue/messages?destination=…, oldest first), each with
 * Retry (POST /queue/messages/{id}/retry: due now) and Drop (DELETE /queue/messages/{id}, after a
 * ConfirmDialog: the recipients get a bounced event, as `postrider queue drop` does), for this
 * destination only. A message still being composed and signed shows so instead of a due time,
 * and has no Retry: it becomes due once signed.
 */
export function QueueMessagesPage() {
  // The destination is in the query, not the path: the daemon answers a path ending in ".net" as a missing file.
  return <QueueDestinationPage destination={useLocation().query.get('destination') ?? ''} />;
}

/** `destination` "" lists every waiting message, and Retry and Drop act on all of a message's deliveries. */
function QueueDestinationPage(props: { destination: string }) {
  const d = props.destination;
  const list = useQueueMessages(d);
  const act = useAction();
  const [dropping, setDropping] = useState<QueueMessage | null>(null);
  const [notice, setNotice] = useState('');
  const verb = async (m: QueueMessage, method: 'POST' | 'DELETE', done: string) => {
    const path = `/queue/messages/${encodeURIComponent(m.messageId)}${method === 'POST' ? '/retry' : ''}`;
    const r = await act.run(() => request<QueueMessage>(method, path, { query: { destination: d || undefined } }));
    if (r) (list.replace(r), setNotice(`${r.subject || r.messageId}: ${done}`));
    return r;
  };
  const rows = list.items?.map((m) => ({ m, job: m.destinations.find((j) => j.destination === d) }));
  return (
    <>
      <PageHeader
        title={d || 'All waiting messages'}
        description={
          <>
            <Link to="/queue">Queue</Link> / messages waiting for delivery{d ? ' to this domain' : ''}, oldest first
          </>
        }
        actions={
          <button type="button" class="button" onClick={list.reload} disabled={list.loading}>
            Refresh
          </button>
        }
      />
      <ProblemBanner error={list.error ?? (dropping ? null : act.error)} />
      <p role="status" class="muted">
        {notice}
      </p>
      {list.more && rows?.length === 0 ? (
        <p>No message{d ? ` to ${d}` : ''} among the oldest queued messages looked at so far. Load more to look further.</p>
      ) : (
        <div class="wide-table">
          <MessageTable rows={rows} error={list.error} busy={act.busy} onRetry={(m) => verb(m, 'POST', 'due now, delivery tries again shortly.')} onDrop={(m) => (act.clear(), setDropping(m))} />
        </div>
      )}
      {list.more && (
        <div class="load-more">
          <button type="button" class="button" onClick={list.loadMore} disabled={list.loading}>
            {list.loading ? 'Loading…' : 'Load more'}
          </button>
        </div>
      )}
      <DropDialog message={dropping} destination={d} busy={act.busy} error={act.error} onCancel={() => setDropping(null)} onConfirm={async () => (await verb(dropping!, 'DELETE', 'dropped; each recipient got a bounced event.')) && (setDropping(null), focusPageTitle())} />
    </>
  );
}

function MessageTable(props: { rows: Row[] | undefined; error: unknown; busy: boolean; onRetry: (m: QueueMessage) => void; onDrop: (m: QueueMessage) => void }) {
  return (
    <DataTable
      caption="Waiting messages"
      rows={props.rows}
      error={props.error}
      rowKey={(r) => r.m.messageId}
      columns={[
        { header: 'Message', cell: (r) => <Link to={`/messages/${r.m.messageId}`}>{r.m.subject || '(no subject)'}</Link> },
        { header: 'Recipients', cell: (r) => <span class="recipients">{(r.job?.recipients ?? r.m.to).join(', ')}</span> },
        { header: 'State', cell: (r) => <StatusBadge status={rowState(r)} /> },
        { header: 'Queued', cell: (r) => <RelativeTime at={r.m.queuedAt} /> },
        { header: 'Attempts', cell: (r) => r.job?.attempts ?? r.m.attempts, numeric: true },
        {
          header: 'Next attempt',
          cell: (r) => (rowState(r) === 'preparing' ? <span class="muted">preparing (composing and signing)</span> : <RelativeTime at={r.job ? r.job.nextAttemptAt : r.m.nextAttemptAt} />),
        },
        { header: 'Last reply', cell: (r) => <ReplyCell reply={r.job?.lastReply ?? r.m.lastReply} /> },
        { header: 'Actions', cell: (r) => <RowActions row={r} busy={props.busy} onRetry={props.onRetry} onDrop={props.onDrop} /> },
      ]}
      empty={{
        title: 'Nothing waiting here',
        next: (
          <>
            Every message to it was delivered or ended. <Link to="/queue">Back to the queue</Link>, or see each message in <Link to="/activity">Activity</Link>.
          </>
        ),
      }}
    />
  );
}

function RowActions(props: { row: Row; busy: boolean; onRetry: (m: QueueMessage) => void; onDrop: (m: QueueMessage) => void }) {
  const { m, job } = props.row;
  if (job?.state === 'done') return <span class="muted">ended</span>;
  if (job?.state === 'sending') return <span class="muted">attempt under way</span>;
  const name = m.subject || m.messageId;
  return (
    <div class="row-actions">
      {rowState(props.row) !== 'preparing' && (
        <button type="button" class="button button-small" disabled={props.busy} aria-label={`Retry ${name} now`} onClick={() => props.onRetry(m)}>
          Retry
        </button>
      )}
      <button type="button" class="button button-small button-danger" disabled={props.busy} aria-label={`Drop ${name}`} onClick={() => props.onDrop(m)}>
        Drop
      </button>
    </div>
  );
}

function DropDialog(props: { message: QueueMessage | null; destination: string; busy: boolean; error: unknown; onConfirm: () => void; onCancel: () => void }) {
  const m = props.message;
  return (
    <ConfirmDialog open={m !== null} title="Drop this message?" confirmLabel="Drop" danger busy={props.busy} onConfirm={props.onConfirm} onCancel={props.onCancel}>
      <ProblemBanner error={props.error} />
      <p>
        Delivery of <strong>{m?.subject || m?.messageId}</strong> to {props.destination} stops for good: each waiting recipient gets a bounced event, which webhooks and Activity see.
      </p>
    </ConfirmDialog>
  );
}
