import { api, withQuery } from '../api';
import { NoChannelYet, useChannelOptions, type ChannelOption } from '../components/channel-select';
import { getCursorPage, LoadMore, useCursorList } from '../components/load-more';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { Link, navigate, useLocation } from '../router';
import { useApi } from '../use-api';
import { MessageView } from './message';
import type { MessageDetails, MessageItem } from '../wire';
import { formatAddress } from './message-types';

const PAGE = 25;

/**
 * The messages of the account's sandbox channels (GET /channels tells which; GET
 * /activity/messages?channelId=&order=desc lists one channel's, newest first, with each sender)
 * as an inbox: sender, recipients, subject, time; the selected one (/sandbox/{id}) is shown
 * rendered with its simulated events.
 */
export function SandboxPage(props: { id?: string }) {
  const { query } = useLocation();
  const channels = useChannelOptions();
  const sandboxes = channels.data ? channels.data.results.filter((c) => c.deliveryType === 'sandbox') : null;
  const channelId = query.get('channelId') || sandboxes?.[0]?.id || '';
  return (
    <>
      <PageHeader title="Sandbox inbox" description="Mail sent through sandbox channels: accepted and shown here, never delivered." />
      <ProblemBanner error={channels.error} />
      {sandboxes === null && !channels.error && <p class="muted">Loading…</p>}
      {sandboxes?.length === 0 && (
        <NoChannelYet
          title="No sandbox channel yet"
          why="Mail sent through a sandbox channel lands here instead of in real inboxes."
          then={
            <>
              with delivery type <strong>sandbox</strong>, then send through it.
            </>
          }
        />
      )}
      {sandboxes && sandboxes.length > 0 && (
        <>
          {sandboxes.length > 1 && <ChannelChoice channels={sandboxes} value={channelId} />}
          <div class="sandbox-layout">
            <Inbox channelId={channelId} selected={props.id} />
            {/* Keyed by message: the next one starts empty, never showing the last one's content (or under its error) while it loads. */}
            {props.id ? <ReadingPane key={props.id} id={props.id} channels={sandboxes} /> : <p class="muted reading-empty">Select a message to read it.</p>}
          </div>
        </>
      )}
    </>
  );
}

function ChannelChoice(props: { channels: ChannelOption[]; value: string }) {
  return (
    <div class="field sandbox-channel">
      <label for="sandbox-channel">Sandbox channel</label>
      <select id="sandbox-channel" value={props.value} onChange={(e) => navigate(withQuery('/sandbox', { channelId: e.currentTarget.value }))}>
        {props.channels.map((c) => (
          <option value={c.id} key={c.id}>
            {c.name}
          </option>
        ))}
      </select>
    </div>
  );
}

function Inbox(props: { channelId: string; selected?: string }) {
  const list = useCursorList(
    (after) => getCursorPage<MessageItem>('/activity/messages', { channelId: props.channelId, limit: PAGE, order: 'desc', after: after || undefined }),
    PAGE,
    [props.channelId],
  );
  return (
    <section class="inbox" aria-label="Inbox">
      <ProblemBanner error={list.error} />
      {list.items === null && <p class="muted">Loading…</p>}
      {list.items?.length === 0 && (
        <div class="empty-state">
          <h2>The inbox is empty</h2>
          <p>Send a message through this channel (POST /send/transactional with its X-Service-Channel-Id, or SMTP); it shows up here.</p>
        </div>
      )}
      <ul class="inbox-list">
        {list.items?.map((m) => (
          <InboxRow m={m} channelId={props.channelId} selected={m.messageId === props.selected} key={m.messageId} />
        ))}
      </ul>
      <LoadMore list={list} label="Load more messages" />
    </section>
  );
}

function InboxRow(props: { m: MessageItem; channelId: string; selected: boolean }) {
  const { m } = props;
  return (
    <li class={props.selected ? 'selected' : undefined}>
      <Link to={withQuery(`/sandbox/${m.messageId}`, { channelId: props.channelId })} aria-current={props.selected ? 'page' : undefined}>
        <span class="inbox-from">{m.from ? formatAddress(m.from) : <span class="muted">(sender no longer kept)</span>}</span>
        <span class="inbox-subject">{m.subject || '(no subject)'}</span>
        <span class="inbox-to">To: {m.recipients.join(', ')}</span>
        <span class="inbox-time">
          <RelativeTime at={m.timestamp} />
        </span>
      </Link>
    </li>
  );
}

function ReadingPane(props: { id: string; channels: ChannelOption[] }) {
  const message = useApi(() => api.get<MessageDetails>(`/activity/messages/${encodeURIComponent(props.id)}`), [props.id]);
  const m = message.data;
  return (
    <section class="reading-pane" aria-label="Message">
      <ProblemBanner error={message.error} />
      {!m && !message.error && <p class="muted">Loading…</p>}
      {m && (
        <>
          <h2>{m.subject || '(no subject)'}</h2>
          <p>
            <Link to={`/messages/${m.messageId}`}>Open the message page</Link>
          </p>
          <MessageView m={m} channelName={props.channels.find((c) => c.id === m.channelId)?.name} headingLevel={3} />
        </>
      )}
    </section>
  );
}
