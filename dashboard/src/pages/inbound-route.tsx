import { api } from '../api';
import { useChannelOptions } from '../components/channel-select';
import { CopyButton } from '../components/copy-button';
import { DeleteButton } from '../components/delete-button';
import { Loading } from '../components/loading-page';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { SigningKey } from '../components/signing-key';
import { StatusBadge } from '../components/status-badge';
import { SaveStatus, useSave } from '../components/use-save';
import { Link } from '../router';
import { useApi } from '../use-api';
import type { InboundRoute } from '../wire';
import { RouteMx } from './inbound-mx';
import { RouteForm, type RouteInput } from './inbound-route-form';

/**
 * One inbound route (GET /inbound/routes/{id}): its domain's MX record, its settings (PATCH), its
 * signing key with Regenerate, its messages, and delete after a confirmation.
 */
export function InboundRoutePage(props: { id: string }) {
  const path = `/inbound/routes/${encodeURIComponent(props.id)}`;
  const route = useApi(() => api.get<InboundRoute>(path), [props.id]);
  const channels = useChannelOptions();
  const save = useSave();
  const r = route.data;
  if (!r) return <Loading title="Inbound route" error={route.error} />;
  // The address is the route's identity: PATCH takes every other field (docs/api.md, "Inbound routes").
  const submit = async ({ address: _, ...changes }: RouteInput) => {
    if (await save.run(() => api.patch<InboundRoute>(path, changes))) route.reload();
  };
  return (
    <>
      <PageHeader
        title={r.address}
        description={
          <>
            <Link to="/inbound">Inbound routes</Link> · <StatusBadge status={r.enabled ? 'enabled' : 'disabled'} />
          </>
        }
        actions={<DeleteRoute route={r} />}
      />
      <ProblemBanner error={channels.error} />
      <p>
        Messages to this address are POSTed to <code class="url-text">{r.url}</code>. <Link to={`/inbound/messages?routeId=${r.id}`}>Its messages</Link>
      </p>
      <RouteMx domainId={r.domainId} />
      <section class="card page-section" aria-labelledby="route-settings">
        <h2 id="route-settings">Settings</h2>
        <SaveStatus save={save} />
        {channels.data && (
          <RouteForm key={r.updatedAt} initial={r} create={false} channels={channels.data.results} submitLabel="Save changes" busy={save.busy} error={save.error} onSubmit={submit} />
        )}
      </section>
      <SigningKey
        signingKey={r.payloadSigningKey}
        regeneratePath={`${path}/regenerate-signing-key`}
        what="Your app checks the X-Service-Webhook-Signature header of each POST with this key, as for webhooks."
        onRegenerated={route.reload}
      />
      <dl class="facts">
        <dt>ID</dt>
        <dd>
          <code>{r.id}</code> <CopyButton text={r.id} label="Copy ID" />
        </dd>
        <dt>Created</dt>
        <dd>
          <RelativeTime at={r.createdAt} />
        </dd>
      </dl>
    </>
  );
}

function DeleteRoute(props: { route: InboundRoute }) {
  return (
    <DeleteButton label="Delete route" title="Delete this route?" path={`/inbound/routes/${props.route.id}`} back="/inbound">
      <p>
        Mail to <code>{props.route.address}</code> is refused from now on (unless a catch-all of its domain takes it). Messages already received stay readable; those
        still waiting for their POST end as failed. This cannot be undone.
      </p>
    </DeleteButton>
  );
}
