import { api } from '../api';
import { Loading } from '../components/loading-page';
import { PageHeader } from '../components/page-header';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { SaveStatus, useSave } from '../components/use-save';
import { useApi } from '../use-api';
import type { Webhook } from '../wire';
import { deliveryOutcome } from './webhooks';
import { DeleteWebhook, TestEvent, WebhookSigningKey } from './webhooks-actions';
import { WebhookForm, type WebhookInput } from './webhooks-form';

/** One webhook: its last delivery and counters, a test event, its settings, the signing key, delete. */
export function WebhookPage(props: { id: string }) {
  const path = `/webhooks/${encodeURIComponent(props.id)}`;
  const hook = useApi(() => api.get<Webhook>(path), [props.id]);
  const save = useSave();
  const w = hook.data;
  if (!w) return <Loading title="Webhook" error={hook.error} />;
  const submit = async (v: WebhookInput) => {
    if (await save.run(() => api.patch<Webhook>(path, v))) hook.reload();
  };
  return (
    <>
      <PageHeader title="Webhook" description={<code class="url-text">{w.url}</code>} actions={<DeleteWebhook webhook={w} />} />
      <section class="page-section" aria-labelledby="wh-delivery">
        <h2 id="wh-delivery">Deliveries</h2>
        <Deliveries webhook={w} />
        <TestEvent webhook={w} />
      </section>
      <section class="card page-section" aria-labelledby="wh-settings">
        <h2 id="wh-settings">Settings</h2>
        <SaveStatus save={save} />
        <WebhookForm key={w.updatedAt} initial={w} submitLabel="Save changes" busy={save.busy} error={save.error} onSubmit={submit} />
      </section>
      <WebhookSigningKey webhook={w} onRegenerated={hook.reload} />
    </>
  );
}

/** The last real delivery (lastDelivery: test events are not recorded) and the counters. */
function Deliveries(props: { webhook: Webhook }) {
  const d = props.webhook.lastDelivery;
  const s = props.webhook.deliveryStats;
  return (
    <dl class="facts">
      <dt>Last delivery</dt>
      <dd>
        {d ? (
          <>
            <StatusBadge status={deliveryOutcome(d)} /> {d.event ?? 'event'}, <RelativeTime at={d.at} />: HTTP {d.statusCode ?? 'no answer'}
            {d.error && <span class="field-error"> {d.error}</span>}
          </>
        ) : (
          <span class="muted">None yet: the first event of its types will be sent here. Send a test event to check the endpoint now.</span>
        )}
      </dd>
      <dt>Delivered</dt>
      <dd>{s.succeeded}</dd>
      <dt>Failed</dt>
      <dd>
        {s.failed} (failed attempts {s.failedAttempts}, {s.consecutiveFailures} in a row)
      </dd>
      <dt>Waiting</dt>
      <dd>{s.pending}</dd>
    </dl>
  );
}
