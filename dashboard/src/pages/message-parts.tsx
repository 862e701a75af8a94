import { EventDetails } from '../components/event-details';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { SummaryList, type SummaryRow } from '../components/summary-list';
import type { DeliveryAttempt, MessageDetails } from '../wire';
import { formatAddress } from './message-types';

/** From, to, subject, channel, status and source of a message, as a description list. */
export function MessageSummary(props: { m: MessageDetails; channelName?: string }) {
  const { m } = props;
  const list = (xs: { email: string; name?: string }[] | undefined) => (xs && xs.length > 0 ? xs.map(formatAddress).join(', ') : undefined);
  const rows: SummaryRow[] = [
    ['From', formatAddress(m.from)],
    ['To', list(m.to) ?? '—'],
    ['Cc', list(m.cc)],
    ['Bcc', list(m.bcc)],
    ['Reply-To', list(m.replyTo)],
    ['Subject', m.subject || '(no subject)'],
    ['Channel', props.channelName ? `${props.channelName} (${m.deliveryType})` : <code>{m.channelId}</code>],
    ['Status', <StatusBadge status={m.status} />],
    ['Source', `${m.mailType} via ${m.mailSource === 'smtp' ? 'SMTP' : 'the API'}`],
    ['Created', <RelativeTime at={m.timestamp} />],
    ['Tags', m.tags && m.tags.length > 0 ? m.tags.join(', ') : undefined],
    ['Message id', <code>{m.messageId}</code>],
  ];
  return <SummaryList rows={rows} />;
}

/** The message's events in order: type, time, recipients and details. */
export function EventTimeline(props: { m: MessageDetails }) {
  if (props.m.events.length === 0) return <p class="muted">No events yet: the message is being accepted.</p>;
  return (
    <ol class="timeline">
      {props.m.events.map((e, i) => (
        <li key={i}>
          <StatusBadge status={e.eventType} /> <RelativeTime at={e.timestamp} />
          {e.recipients.length > 0 && <span class="recipients"> · {e.recipients.join(', ')}</span>}
          {e.details && Object.keys(e.details).length > 0 && <EventDetails details={e.details} />}
        </li>
      ))}
    </ol>
  );
}

/** How an attempt's session was encrypted, or why it was not. */
export function tlsText(a: DeliveryAttempt): string {
  const d = a.tlsDetail;
  if (!a.tls) return d?.reason ? `Plain text: ${d.reason}` : a.mx ? 'Plain text' : 'No session';
  const cert = d?.verified ? 'certificate verified' : d?.verifyError ? `certificate not verified (${d.verifyError})` : 'certificate not verified';
  return [d?.protocol, d?.cipher].filter(Boolean).join(' ') + (d?.protocol || d?.cipher ? ', ' : 'TLS, ') + cert;
}

function AttemptCard(props: { a: DeliveryAttempt }) {
  const { a } = props;
  // A reply as received already starts with its codes; a local failure's description does not.
  const codes = [a.smtpCode, a.enhancedCode].filter((x) => x !== undefined && x !== '').join(' ');
  const reply = codes && !a.response.startsWith(codes) ? `${codes} ${a.response}` : a.response;
  return (
    <li class="attempt">
      <div>
        <StatusBadge status={a.outcome} /> <RelativeTime at={a.at} /> · {a.domain}
      </div>
      <dl class="summary">
        <div>
          <dt>MX</dt>
          <dd>{a.mx ?? <span class="muted">none reached</span>}</dd>
        </div>
        <div>
          <dt>Reply</dt>
          <dd>
            <code>{reply}</code>
          </dd>
        </div>
        <div>
          <dt>TLS</dt>
          <dd>{tlsText(a)}</dd>
        </div>
        {a.tlsDetail?.dane && (
          <div>
            <dt>DANE</dt>
            <dd>{a.tlsDetail.dane}</dd>
          </div>
        )}
        {a.mtaSts && (
          <div>
            <dt>MTA-STS</dt>
            <dd>{`${a.mtaSts.mode} (policy ${a.mtaSts.id})${a.mtaSts.failure ? `: ${a.mtaSts.failure}` : ''}`}</dd>
          </div>
        )}
      </dl>
    </li>
  );
}

/** Every delivery attempt: MX, SMTP reply, TLS, DANE and MTA-STS. */
export function DeliveryAttempts(props: { m: MessageDetails }) {
  if (props.m.attempts.length === 0) {
    const why = props.m.deliveryType === 'sandbox' ? 'A sandbox channel delivers nothing: its events are simulated.' : 'No delivery attempt yet: the message is waiting in the queue.';
    return <p class="muted">{why}</p>;
  }
  return (
    <ol class="attempts">
      {props.m.attempts.map((a, i) => (
        <AttemptCard a={a} key={i} />
      ))}
    </ol>
  );
}

/** The header fields of the stored message, in order. */
export function HeaderFields(props: { m: MessageDetails }) {
  const fields = props.m.messageHeaders;
  if (!fields) return <p class="muted">The message is not composed yet; reload in a moment.</p>;
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Header fields">
      <table class="headers-table">
        <caption class="visually-hidden">Header fields</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {fields.map((f, i) => (
            <tr key={i}>
              <th scope="row">{f.name}</th>
              <td>
                <code>{f.value}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
