import { useMemo } from 'preact/hooks';
import { withQuery } from '../api';
import { useChannelOptions } from '../components/channel-select';
import { DataTable, type Column } from '../components/data-table';
import { EventDetails } from '../components/event-details';
import { getCursorPage, LoadMore, useCursorList } from '../components/load-more';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { Link, navigate, useLocation } from '../router';
import { apiQuery, EMPTY_FILTER, filterFromQuery, foldListErrors, pageQuery, type ActivityFilter } from './activity-filter';
import { ActivityFilters } from './activity-filters';
import type { ActivityEvent } from '../wire';

/**
 * The event list of GET /activity/events, newest first (order=desc), with every filter it has
 * (kept in the URL), older pages on the `after` cursor as the end scrolls into view or by the
 * Load more button; each row links to its message page.
 */
export function ActivityPage() {
  const { query } = useLocation();
  const search = query.toString();
  const filter = useMemo(() => filterFromQuery(new URLSearchParams(search)), [search]);
  const channels = useChannelOptions();
  const list = useCursorList((after) => getCursorPage<ActivityEvent>('/activity/events', { ...apiQuery(filter), after: after || undefined }), filter.limit, [search]);
  const error = foldListErrors(list.error);
  const names = new Map((channels.data?.results ?? []).map((c) => [c.id, c.name]));
  const apply = (f: ActivityFilter) => navigate(withQuery('/activity', pageQuery(f)));
  const filtered = search !== '' && search !== `limit=${filter.limit}`;
  return (
    <>
      <PageHeader title="Activity" description="Events of your messages, newest first. Filters are kept in the address, so a view can be shared." />
      <ActivityFilters value={filter} channels={channels.data?.results ?? []} error={error} onApply={apply} />
      <ProblemBanner error={channels.error ?? error} />
      {list.items && (
        <p class="muted" aria-live="polite">
          Showing {list.items.length} of {list.totalCount.toLocaleString()} events
        </p>
      )}
      <DataTable
        caption="Events"
        columns={columns(names)}
        rows={list.items}
        error={list.error}
        rowKey={(e) => `${e.messageId}-${e.eventType}-${e.timestamp}-${e.recipients.join(',')}`}
        empty={emptyState(filtered)}
      />
      <LoadMore list={list} label="Load more events" />
    </>
  );
}

function emptyState(filtered: boolean) {
  return filtered
    ? { title: 'No events match these filters', next: <button type="button" class="button" onClick={() => navigate(withQuery('/activity', pageQuery(EMPTY_FILTER)))}>Clear the filters</button> }
    : {
        title: 'No activity yet',
        next: (
          <p>
            Send a message with <code>POST /send/transactional</code> or over SMTP; its events (accepted, processed, delivered…) show up here. A{' '}
            <Link to="/channels">sandbox channel</Link> delivers nothing and is the safe place to try.
          </p>
        ),
      };
}

function columns(names: Map<string, string>): Column<ActivityEvent>[] {
  return [
    { header: 'Time', class: 'col-time', cell: (e) => <RelativeTime at={e.timestamp} /> },
    { header: 'Event', class: 'col-event', cell: (e) => <StatusBadge status={e.eventType} /> },
    {
      header: 'Subject',
      class: 'col-subject',
      cell: (e) => (
        <Link to={`/messages/${e.messageId}`} class="subject-link">
          {e.subject || '(no subject)'}
        </Link>
      ),
    },
    { header: 'Recipients', class: 'col-recipients', cell: (e) => <span class="recipients">{e.recipients.join(', ')}</span> },
    {
      header: 'Channel',
      class: 'col-channel',
      cell: (e) => (
        <>
          {names.get(e.channelId) ?? <code>{e.channelId.slice(0, 8)}</code>}
          <small class="muted event-kind">
            {e.mailType} · {e.mailSource}
          </small>
        </>
      ),
    },
    { header: 'Details', class: 'col-details', cell: (e) => <EventDetails details={e.details} /> },
  ];
}
