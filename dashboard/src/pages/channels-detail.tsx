import { api } from '../api';
import { CopyButton } from '../components/copy-button';
import { DeleteButton } from '../components/delete-button';
import { Loading } from '../components/loading-page';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { SaveStatus, useSave } from '../components/use-save';
import { Link } from '../router';
import { useApi } from '../use-api';
import type { ChannelDetail, DomainSummary, Page } from '../wire';
import { ChannelForm, DELIVERY_HELP, type ChannelInput } from './channels-form';

/** One channel: its settings (PATCH), the domains linked to it, and delete. */
export function ChannelPage(props: { id: string }) {
  const path = `/channels/${encodeURIComponent(props.id)}`;
  const channel = useApi(() => api.get<ChannelDetail>(path), [props.id]);
  const domains = useApi(() => api.get<Page<DomainSummary>>('/domains', { channelIds: props.id, limit: 500 }), [props.id]);
  const save = useSave();
  const c = channel.data;
  if (!c) return <Loading title="Channel" error={channel.error} />;
  const submit = async (v: ChannelInput) => {
    if (await save.run(() => api.patch<ChannelDetail>(path, v))) channel.reload();
  };
  return (
    <>
      <PageHeader title={c.name} description={<DeliveryLine channel={c} />} actions={<DeleteChannel channel={c} />} />
      <section class="card page-section" aria-labelledby="channel-settings">
        <h2 id="channel-settings">Settings</h2>
        <SaveStatus save={save} />
        <ChannelForm key={c.updatedAt} initial={c} submitLabel="Save changes" busy={save.busy} error={save.error} onSubmit={submit} />
      </section>
      <section class="page-section" aria-labelledby="channel-domains">
        <h2 id="channel-domains">Linked domains</h2>
        <ProblemBanner error={domains.error} />
        <LinkedDomains rows={domains.data?.results ?? null} />
      </section>
      <dl class="facts">
        <dt>ID</dt>
        <dd>
          <code>{c.id}</code> <CopyButton text={c.id} label="Copy ID" />
        </dd>
        <dt>Created</dt>
        <dd>
          <RelativeTime at={c.createdAt} />
        </dd>
        <dt>Updated</dt>
        <dd>
          <RelativeTime at={c.updatedAt} />
        </dd>
      </dl>
    </>
  );
}

function DeliveryLine(props: { channel: ChannelDetail }) {
  return (
    <span class="delivery-line">
      <StatusBadge status={props.channel.deliveryType} /> {DELIVERY_HELP[props.channel.deliveryType]}
    </span>
  );
}

function LinkedDomains(props: { rows: DomainSummary[] | null }) {
  if (props.rows === null) return <p class="muted">Loading…</p>;
  if (props.rows.length === 0) {
    return (
      <div class="empty-state">
        <p>
          No domain is linked, so this channel cannot send yet. <Link to="/domains">Add a domain</Link> and link it to this channel.
        </p>
      </div>
    );
  }
  return (
    <ul class="plain-list">
      {props.rows.map((d) => (
        <li key={d.id}>
          <Link to={`/domains/${d.id}`}>{d.name}</Link> <StatusBadge status={d.verified ? 'verified' : 'pending'} />
        </li>
      ))}
    </ul>
  );
}

function DeleteChannel(props: { channel: ChannelDetail }) {
  return (
    <DeleteButton label="Delete channel" title={`Delete ${props.channel.name}?`} path={`/channels/${props.channel.id}`} back="/channels">
      <p>Everything of the channel goes with it: its messages, events and statistics. Domains linked to it stay, but no longer send for it. This cannot be undone.</p>
    </DeleteButton>
  );
}
