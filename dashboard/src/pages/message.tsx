import { api } from '../api';
import { useChannelOptions } from '../components/channel-select';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { Link } from '../router';
import { useApi } from '../use-api';
import { MessageBody } from './message-body';
import { DeliveryAttempts, EventTimeline, HeaderFields, MessageSummary } from './message-parts';
import type { MessageDetails } from '../wire';

/** The sections of one message: summary, events, delivery attempts, body, header fields. Also the sandbox inbox's reading pane. */
export function MessageView(props: { m: MessageDetails; channelName?: string; headingLevel?: 2 | 3 }) {
  const H = props.headingLevel === 3 ? 'h3' : 'h2';
  const { m } = props;
  return (
    <div class="message-view">
      <MessageSummary m={m} channelName={props.channelName} />
      <section aria-label="Events">
        <H>Events</H>
        <EventTimeline m={m} />
      </section>
      <section aria-label="Delivery attempts">
        <H>Delivery attempts</H>
        <DeliveryAttempts m={m} />
      </section>
      <section aria-label="Body">
        <H>Body</H>
        <MessageBody m={m} headingLevel={props.headingLevel === 3 ? 4 : 3} />
      </section>
      <section aria-label="Header fields">
        <H>Header fields</H>
        <HeaderFields m={m} />
      </section>
    </div>
  );
}

/** GET /activity/messages/{id} as a page. */
export function MessagePage(props: { id: string }) {
  const message = useApi(() => api.get<MessageDetails>(`/activity/messages/${encodeURIComponent(props.id)}`), [props.id]);
  const channels = useChannelOptions();
  const m = message.data;
  const channelName = m ? channels.data?.results.find((c) => c.id === m.channelId)?.name : undefined;
  return (
    <>
      <PageHeader
        title={m ? m.subject || '(no subject)' : 'Message'}
        description={<Link to={`/activity?messageId=${encodeURIComponent(props.id)}`}>Its events in Activity</Link>}
        actions={
          <button type="button" class="button" onClick={message.reload}>
            Reload
          </button>
        }
      />
      <ProblemBanner error={message.error} />
      {message.loading && !m && <p class="muted">Loading…</p>}
      {m && <MessageView m={m} channelName={channelName} />}
    </>
  );
}
