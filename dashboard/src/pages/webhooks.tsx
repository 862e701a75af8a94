import { api } from '../api';
import { useChannelOptions } from '../components/channel-select';
import { DataTable } from '../components/data-table';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { useAction } from '../components/use-action';
import { Link, navigate } from '../router';
import { useApi } from '../use-api';
import type { LastDelivery, Page, Webhook } from '../wire';
import { NEW_WEBHOOK, WebhookForm, type WebhookInput } from './webhooks-form';

/** 2xx is a success; anything else (or no answer) a failure, as delivery counts them. */
export function deliveryOutcome(d: { statusCode: number | null; error: string | null }): string {
  return d.statusCode !== null && d.statusCode >= 200 && d.statusCode < 300 && !d.error ? 'delivered' : 'failed';
}

/** GET /webhooks and the form to create one, which opens the new webhook's page. */
export function WebhooksPage() {
  const list = useApi(() => api.get<Page<Webhook>>('/webhooks', { limit: 500 }), []);
  const channels = useChannelOptions();
  const channelName = (id: string | null) => (id === null ? 'All channels' : (channels.data?.results.find((c) => c.id === id)?.name ?? id));
  const create = useAction();
  const submit = async (v: WebhookInput) => {
    const made = await create.run(() => api.post<Webhook>('/webhooks', v));
    if (made) navigate(`/webhooks/${made.id}`);
  };
  return (
    <>
      <PageHeader title="Webhooks" description="Signed HTTP POSTs to your endpoints when mail events happen." />
      <ProblemBanner error={list.error ?? channels.error} />
      <DataTable
        caption="Webhooks"
        rows={list.data?.results}
        error={list.error}
        rowKey={(w) => w.id}
        columns={[
          { header: 'Endpoint', cell: (w) => <Link to={`/webhooks/${w.id}`} class="url-text">{w.url}</Link> },
          { header: 'Channel', cell: (w) => channelName(w.channelId) },
          { header: 'Events', cell: (w) => w.events.join(', ') },
          { header: 'State', cell: (w) => <StatusBadge status={w.enabled ? 'enabled' : 'disabled'} /> },
          { header: 'Last delivery', cell: (w) => (w.lastDelivery ? <LastDeliveryCell d={w.lastDelivery} /> : <span class="muted">none yet</span>) },
        ]}
        empty={{ title: 'No webhooks yet', next: 'Create one below with the URL of your endpoint, then send it a test event.' }}
      />
      <section class="card page-section" aria-labelledby="new-webhook">
        <h2 id="new-webhook">Create a webhook</h2>
        <ProblemBanner error={create.error} />
        <WebhookForm initial={NEW_WEBHOOK} submitLabel="Create webhook" busy={create.busy} error={create.error} onSubmit={submit} />
      </section>
    </>
  );
}

function LastDeliveryCell(props: { d: LastDelivery }) {
  return (
    <>
      <StatusBadge status={deliveryOutcome(props.d)} /> {props.d.statusCode ?? '—'} <RelativeTime at={props.d.at} />
    </>
  );
}
