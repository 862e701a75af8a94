import { api } from '../api';
import { DataTable, type Column } from '../components/data-table';
import { LoadMore } from '../components/load-more';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { useQueryState } from '../components/query-state';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { Link } from '../router';
import type { InboundMessageItem, InboundMessagePage } from '../wire';
import { InboundFilters, NO_FILTER, type InboundFilter } from './inbound-filters';
import { useTextCursorList } from './inbound-list';
import { InboundTabs, useRouteOptions } from './inbound-nav';

const LIMIT = 50;

/**
 * The mail received for the account's routes (GET /inbound/messages), newest first, filtered by
 * route, status, sender and subject (kept in the address), older pages on the `after` cursor as
 * the end scrolls into view or with Load more; each row opens the message.
 */
export function InboundMessagesPage() {
  const [filter, setFilter] = useQueryState<InboundFilter>('/inbound/messages', NO_FILTER);
  const routes = useRouteOptions();
  const list = useTextCursorList(
    (after) => api.get<InboundMessagePage>('/inbound/messages', { ...filter, limit: LIMIT, after }),
    [filter.routeId, filter.status, filter.from, filter.subject],
  );
  const addresses = routes.data ? new Map(routes.data.results.map((r) => [r.id, r.address])) : null;
  const filtered = Object.values(filter).some((v) => v !== '');
  return (
    <>
      <PageHeader title="Inbound messages" description="Mail received for your inbound routes, newest first, with the POSTs of each to your app." />
      <InboundTabs current="messages" />
      <InboundFilters value={filter} routes={routes.data?.results ?? []} error={list.error} onApply={setFilter} />
      <ProblemBanner error={routes.error ?? list.error} />
      {/* Seven columns keep a readable width on a phone and scroll sideways in their box. */}
      <div class="wide-table">
        <DataTable
          caption="Inbound messages"
          rows={list.items}
          error={list.error}
          rowKey={(m) => m.id}
          columns={columns(addresses)}
          empty={
            filtered
              ? { title: 'No message matches these filters', next: <button type="button" class="button" onClick={() => setFilter(NO_FILTER)}>Clear the filters</button> }
              : { title: 'No mail received yet', next: <p>Mail to the address of a <Link to="/inbound">route</Link> shows up here once the domain's MX record points to postrider.</p> }
          }
        />
      </div>
      <LoadMore list={list} label="Load more messages" />
    </>
  );
}

/** `addresses` null while the routes load; a message whose route is not among them outlived it. */
function columns(addresses: Map<string, string> | null): Column<InboundMessageItem>[] {
  return [
    { header: 'Received', cell: (m) => <RelativeTime at={m.receivedAt} /> },
    { header: 'Status', cell: (m) => <StatusBadge status={m.status} /> },
    {
      header: 'Subject',
      cell: (m) => (
        <Link to={`/inbound/messages/${m.id}`} class="subject-link">
          {m.subject || '(no subject)'}
        </Link>
      ),
    },
    { header: 'From', cell: (m) => <span class="recipients">{m.from ?? (m.envelope.mailFrom || '(none)')}</span> },
    { header: 'To', cell: (m) => <span class="recipients">{m.envelope.rcptTo.join(', ')}</span> },
    { header: 'Route', cell: (m) => <span class="recipients">{addresses ? (addresses.get(m.routeId) ?? 'deleted route') : '…'}</span> },
    { header: 'POSTs', numeric: true, cell: (m) => m.attemptCount },
  ];
}
