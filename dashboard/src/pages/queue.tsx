import { api } from '../api';
import { DataTable } from '../components/data-table';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { Link } from '../router';
import { useApi } from '../use-api';
import { ReplyCell } from './queue-reply';
import type { QueueDestination, QueueSummary } from '../wire';

/**
 * GET /queue: the account's waiting messages per destination (recipient domain), the oldest,
 * the next attempt and the last reply; each destination opens its messages. The answer looks
 * at the oldest queued messages only (a cap, `complete: false`), which the page says. Messages
 * still being composed and signed after their commit are not due yet: the page counts them
 * apart, so a burst that outruns signing does not read as a stalled queue.
 */
export function QueuePage() {
  const summary = useApi(() => api.get<QueueSummary>('/queue', { limit: 500 }), []);
  const s = summary.data;
  return (
    <>
      <PageHeader
        title="Queue"
        description={
          <>
            Messages of live channels waiting for delivery, per recipient domain: between attempts after a temporary failure, or due now. <Link to="/queue/messages">All waiting messages</Link>
          </>
        }
        actions={
          <button type="button" class="button" onClick={summary.reload} disabled={summary.loading}>
            Refresh
          </button>
        }
      />
      <ProblemBanner error={summary.error} />
      {s && !s.complete && (
        <div class="banner banner-warn queue-note" role="note">
          The counts cover the oldest {s.scannedMessages.toLocaleString()} queued messages only: the queue holds more than one look reads. Newer messages are not counted here.
        </div>
      )}
      {s && s.preparing > 0 && (
        <p class="muted queue-note" role="note">
          {s.preparing === 1 ? '1 message is' : `${s.preparing.toLocaleString()} messages are`} being prepared (composed and DKIM-signed): each becomes due once signed.
        </p>
      )}
      {s && s.destinationCount > s.results.length && (
        <p class="muted queue-note">
          Showing the {s.results.length} destinations with the most messages of {s.destinationCount.toLocaleString()}.
        </p>
      )}
      <div class="wide-table">
        <DestinationTable rows={s?.results} error={summary.error} />
      </div>
    </>
  );
}

/** The earliest due time; without one, every message is being sent or still being prepared. */
function NextAttempt(props: { d: QueueDestination }) {
  const d = props.d;
  if (d.nextAttemptAt) return <RelativeTime at={d.nextAttemptAt} />;
  return <span class="muted">{d.preparing > 0 ? 'preparing (composing and signing)' : 'under way'}</span>;
}

function DestinationTable(props: { rows: QueueDestination[] | undefined; error: unknown }) {
  return (
    <DataTable
      caption="Waiting messages per destination"
      rows={props.rows}
      error={props.error}
      rowKey={(d) => d.destination}
      columns={[
        {
          header: 'Destination',
          cell: (d) => (
            <>
              <Link to={`/queue/messages?destination=${encodeURIComponent(d.destination)}`}>{d.destination}</Link>
              {d.site !== d.destination && <small class="muted reply-text">MX site {d.site}</small>}
            </>
          ),
        },
        { header: 'Messages', cell: (d) => d.messages.toLocaleString(), numeric: true },
        { header: 'Sending now', cell: (d) => d.sending.toLocaleString(), numeric: true },
        { header: 'Preparing', cell: (d) => d.preparing.toLocaleString(), numeric: true },
        { header: 'Oldest', cell: (d) => <RelativeTime at={d.oldestQueuedAt} /> },
        { header: 'Next attempt', cell: (d) => <NextAttempt d={d} /> },
        { header: 'Last reply', cell: (d) => <ReplyCell reply={d.lastReply} /> },
      ]}
      empty={{
        title: 'Nothing waiting: every message was delivered or ended',
        next: 'Messages of live channels show here while they wait for a delivery attempt, for example after a receiving server answered 4xx. Activity shows what happened to each message.',
      }}
    />
  );
}
