import { api } from '../api';
import { DataTable } from '../components/data-table';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { useAction } from '../components/use-action';
import { Link, navigate } from '../router';
import { useApi } from '../use-api';
import type { ChannelDetail, ChannelSummary, Page } from '../wire';
import { ChannelForm, NEW_CHANNEL, type ChannelInput } from './channels-form';

/** GET /channels (up to 500) and the form to create one, which opens the new channel's page. */
export function ChannelsPage() {
  const list = useApi(() => api.get<Page<ChannelSummary>>('/channels', { limit: 500 }), []);
  const create = useAction();
  const submit = async (v: ChannelInput) => {
    const made = await create.run(() => api.post<ChannelDetail>('/channels', v));
    if (made) navigate(`/channels/${made.id}`);
  };
  return (
    <>
      <PageHeader title="Channels" description="A channel groups the mail of one application or stream: its delivery type, tracking, keys and statistics." />
      <ProblemBanner error={list.error} />
      <DataTable
        caption="Channels"
        rows={list.data?.results}
        error={list.error}
        rowKey={(c) => c.id}
        columns={[
          { header: 'Name', cell: (c) => <Link to={`/channels/${c.id}`}>{c.name}</Link> },
          { header: 'Delivery', cell: (c) => <StatusBadge status={c.deliveryType} /> },
          { header: 'Created', cell: (c) => <RelativeTime at={c.createdAt} /> },
          { header: 'ID', cell: (c) => <code>{c.id}</code> },
        ]}
        empty={{ title: 'No channels yet', next: 'Create one below: start with a sandbox channel to try sending without delivering anything.' }}
      />
      {list.data && list.data.totalCount > list.data.results.length && (
        <p class="muted">
          Showing {list.data.results.length} of {list.data.totalCount} channels.
        </p>
      )}
      <section class="card page-section" aria-labelledby="new-channel">
        <h2 id="new-channel">Create a channel</h2>
        <ProblemBanner error={create.error} />
        <ChannelForm initial={NEW_CHANNEL} submitLabel="Create channel" busy={create.busy} error={create.error} onSubmit={submit} />
      </section>
    </>
  );
}
