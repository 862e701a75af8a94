import { requestFile } from '../api';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { SummaryList, type SummaryRow } from '../components/summary-list';
import { useAction } from '../components/use-action';
import { Link } from '../router';
import type { InboundMessageDetails, InboundRoute } from '../wire';

/** The envelope, header From and Subject, route, status and where it came from, as a description list. */
export function InboundSummary(props: { m: InboundMessageDetails; route: InboundRoute | null | undefined }) {
  const { m } = props;
  const route = props.route ? <Link to={`/inbound/routes/${m.routeId}`}>{props.route.address}</Link> : props.route === null ? 'deleted route' : '…';
  const rows: SummaryRow[] = [
    ['From', m.from ?? <span class="muted">none readable</span>],
    ['Subject', m.subject ?? <span class="muted">none</span>],
    ['Envelope sender', m.envelope.mailFrom || <span class="muted">none (a bounce: MAIL FROM:&lt;&gt;)</span>],
    ['Envelope recipients', m.envelope.rcptTo.join(', ')],
    ['Mailbox hash', m.mailboxHash ?? undefined],
    ['Route', route],
    ['Status', <StatusBadge status={m.status} />],
    ['Next POST', m.status === 'received' && m.nextAttemptAt ? <RelativeTime at={m.nextAttemptAt} /> : undefined],
    ['Received', <RelativeTime at={m.receivedAt} />],
    ['Verified', m.processedAt ? <RelativeTime at={m.processedAt} /> : <span class="muted">not yet</span>],
    ['Sent by', `${m.clientAddress} (HELO ${m.helo})`],
    ['Size', `${m.size.toLocaleString()} bytes`],
    ['Message id', <code>{m.id}</code>],
  ];
  return <SummaryList rows={rows} />;
}

/** Each POST of the message to its route's URL: when, the HTTP status (or none), the error. */
export function PostAttempts(props: { m: InboundMessageDetails }) {
  const { attempts, status } = props.m;
  if (attempts.length === 0) return <p class="muted">{status === 'received' ? 'No POST yet: it comes once the message is verified.' : 'No POST was made.'}</p>;
  return (
    <ol class="attempts">
      {attempts.map((a, i) => {
        const ok = a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300;
        const answer = a.statusCode === null ? 'no answer' : `HTTP ${a.statusCode}`;
        // The error of a non-2xx answer repeats its status ("HTTP 500: <body>"): said once.
        const error = a.error?.startsWith(`${answer}: `) ? a.error.slice(answer.length + 2) : a.error;
        return (
          <li class="attempt" key={i}>
            <StatusBadge status={ok ? 'delivered' : 'failed'} /> <RelativeTime at={a.at} />: {answer}
            {error && <span class="field-error"> ({error})</span>}
          </li>
        );
      })}
    </ol>
  );
}

/**
 * GET /inbound/messages/{id}/raw saved as a .eml file: fetched with the dashboard header (a
 * plain link would not carry it), then handed to the browser's download from a blob URL.
 */
export function DownloadRaw(props: { id: string }) {
  const get = useAction();
  const save = async () => {
    const blob = await get.run(() => requestFile(`/inbound/messages/${encodeURIComponent(props.id)}/raw`));
    if (!blob) return;
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = `${props.id}.eml`;
    document.body.append(a);
    a.click();
    a.remove();
    // The download has its own reference by now; the URL only has to outlive the click.
    window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  return (
    <>
      <button type="button" class="button" disabled={get.busy} onClick={save}>
        {get.busy ? 'Downloading…' : 'Download raw message (.eml)'}
      </button>
      {get.error ? <ProblemBanner error={get.error} /> : null}
    </>
  );
}
