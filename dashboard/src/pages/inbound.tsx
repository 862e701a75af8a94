import { api } from '../api';
import { NoChannelYet, useChannelOptions, type ChannelOption } from '../components/channel-select';
import { DataTable, type Column } from '../components/data-table';
import { PageHeader } from '../components/page-header';
import { Pager } from '../components/pager';
import { ProblemBanner } from '../components/problem-banner';
import { useQueryState } from '../components/query-state';
import { StatusBadge } from '../components/status-badge';
import { useAction } from '../components/use-action';
import { Link, navigate } from '../router';
import { useApi } from '../use-api';
import type { DomainDetail, InboundRoute, Page } from '../wire';
import { MxCell, useRouteDomains } from './inbound-mx';
import { InboundTabs } from './inbound-nav';
import { NEW_ROUTE, RouteForm, type RouteInput } from './inbound-route-form';

const LIMIT = 25;

/**
 * The Inbound section's first page (issue 33): the routes (GET /inbound/routes, 25 a page, the
 * page in the address) with the MX record status of each one's domain, and the form that
 * creates one (POST /inbound/routes), which opens the new route's page.
 */
export function InboundPage() {
  const [q, setQ] = useQueryState('/inbound', { offset: '0' });
  const offset = Number(q.offset) || 0;
  const list = useApi(() => api.get<Page<InboundRoute>>('/inbound/routes', { limit: LIMIT, offset }), [offset]);
  const channels = useChannelOptions();
  const domains = useRouteDomains((list.data?.results ?? []).map((r) => r.domainId));
  const names = new Map((channels.data?.results ?? []).map((c) => [c.id, c.name]));
  return (
    <>
      <PageHeader title="Inbound" description="Mail received for addresses of your domains, POSTed to your app as signed JSON." />
      <InboundTabs current="routes" />
      <ProblemBanner error={list.error ?? channels.error ?? domains.error} />
      {/* Readable columns on a phone, scrolling sideways in their box. */}
      <div class="wide-table wide-table-small">
        <DataTable
          caption="Inbound routes"
          rows={list.data?.results}
          error={list.error}
          rowKey={(r) => r.id}
          columns={columns(names, domains.data ?? undefined)}
          empty={{ title: 'No inbound routes yet', next: 'Create one below: the address that receives mail and the URL of your app that gets each message.' }}
        />
      </div>
      <Pager label="Inbound routes" offset={offset} limit={LIMIT} total={list.data?.totalCount ?? 0} onChange={(o) => setQ({ offset: String(o) })} />
      <section class="card page-section" aria-labelledby="new-route">
        <h2 id="new-route">Create a route</h2>
        {channels.data?.results.length === 0 ? (
          <NoChannelYet why="Received messages belong to a channel." then="first." />
        ) : (
          channels.data && <CreateRoute channels={channels.data.results} />
        )}
      </section>
    </>
  );
}

function columns(names: Map<string, string>, domains: Map<string, DomainDetail> | undefined): Column<InboundRoute>[] {
  return [
    {
      header: 'Address',
      cell: (r) => (
        <Link to={`/inbound/routes/${r.id}`} class="url-text">
          {r.address}
        </Link>
      ),
    },
    { header: 'Endpoint', cell: (r) => <code class="url-text">{r.url}</code> },
    { header: 'Channel', cell: (r) => names.get(r.channelId) ?? <code>{r.channelId}</code> },
    { header: 'State', cell: (r) => <StatusBadge status={r.enabled ? 'enabled' : 'disabled'} /> },
    { header: 'MX record', cell: (r) => <MxCell domain={domains?.get(r.domainId)} /> },
  ];
}

function CreateRoute(props: { channels: ChannelOption[] }) {
  const create = useAction();
  const submit = async (v: RouteInput) => {
    const made = await create.run(() => api.post<InboundRoute>('/inbound/routes', v));
    if (made) navigate(`/inbound/routes/${made.id}`);
  };
  return (
    <>
      <ProblemBanner error={create.error} />
      <RouteForm initial={NEW_ROUTE} create channels={props.channels} submitLabel="Create route" busy={create.busy} error={create.error} onSubmit={submit} />
    </>
  );
}
