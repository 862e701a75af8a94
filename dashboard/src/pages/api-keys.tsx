import { useState } from 'preact/hooks';
import { api, endSession, session } from '../api';
import { useChannelOptions } from '../components/channel-select';
import { ConfirmDialog } from '../components/confirm-dialog';
import { DataTable, type Column } from '../components/data-table';
import { focusPageTitle } from '../components/focus';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { useAction } from '../components/use-action';
import { useApi } from '../use-api';
import type { ApiKeySummary, Page } from '../wire';
import { CreateKey } from './api-keys-form';
import { SmtpSettings } from './smtp-settings';

/** What the login page says after this session's own key was revoked here. */
export const REVOKED_OWN_KEY = 'You revoked the API key this session was signed in with, so the session has ended. Sign in with another account-level key.';

/**
 * The account's API keys (GET /api-keys): create one (the secret shown once), revoke one after a
 * confirmation (this session's own key signs the dashboard out, and the dialog says so), and the
 * SMTP settings to copy (GET /dashboard/settings): host, ports, user name and which key is the password.
 */
export function ApiKeysPage() {
  const keys = useApi(() => api.get<Page<ApiKeySummary>>('/api-keys', { limit: 500 }), []);
  const current = useApi(() => session.current(), []);
  const channels = useChannelOptions();
  const [revoking, setRevoking] = useState<ApiKeySummary | null>(null);
  const names = new Map((channels.data?.results ?? []).map((c) => [c.id, c.name]));
  const ownKeyId = current.data?.keyId;
  return (
    <>
      <PageHeader title="API keys" description="Keys for the HTTP API and SMTP submission. An account key acts on every channel of the account; a channel key only on its channel." />
      <ProblemBanner error={keys.error ?? channels.error} />
      <DataTable
        caption="API keys"
        rows={keys.data?.results}
        error={keys.error}
        rowKey={(k) => k.id}
        columns={columns({ names, ownKeyId, onRevoke: setRevoking })}
        empty={{ title: 'No API keys', next: 'Create one below.' }}
      />
      {keys.data && keys.data.totalCount > keys.data.results.length && (
        <p class="muted">
          Showing {keys.data.results.length} of {keys.data.totalCount} keys.
        </p>
      )}
      <CreateKey channels={channels.data?.results ?? []} onCreated={keys.reload} />
      <SmtpSettings channels={channels.data?.results ?? []} />
      {revoking && <RevokeDialog apiKey={revoking} own={revoking.id === ownKeyId} onDone={() => (setRevoking(null), keys.reload())} onCancel={() => setRevoking(null)} />}
    </>
  );
}

function columns(o: { names: Map<string, string>; ownKeyId?: string; onRevoke: (k: ApiKeySummary) => void }): Column<ApiKeySummary>[] {
  return [
    {
      header: 'Name',
      cell: (k) => (
        <>
          {k.name || <span class="muted">(no name)</span>}
          {k.id === o.ownKeyId && <small class="badge badge-neutral key-current">this session</small>}
        </>
      ),
    },
    { header: 'Acts on', cell: (k) => (k.channelId ? <>channel {o.names.get(k.channelId) ?? <code>{k.channelId}</code>}</> : 'the whole account') },
    { header: 'Starts with', cell: (k) => <code>{k.prefix}…</code> },
    { header: 'SMTP user name', cell: (k) => (k.channelId ? <code>api</code> : <span class="muted">a channel id</span>) },
    { header: 'Created', cell: (k) => <RelativeTime at={k.createdAt} /> },
    {
      header: 'Actions',
      cell: (k) => (
        <button type="button" class="button button-small" onClick={() => o.onRevoke(k)} aria-label={`Revoke ${k.name || k.prefix}`}>
          Revoke
        </button>
      ),
    },
  ];
}

/**
 * DELETE /api-keys/{id} after a confirmation. The key of this very session ends it: the daemon
 * closes its sessions at once, so the dashboard signs out and says why instead of failing on its
 * next request.
 */
function RevokeDialog(props: { apiKey: ApiKeySummary; own: boolean; onDone: () => void; onCancel: () => void }) {
  const revoke = useAction();
  const label = props.apiKey.name || `${props.apiKey.prefix}…`;
  const confirm = async () => {
    if (!(await revoke.run(() => api.del(`/api-keys/${props.apiKey.id}`).then(() => true)))) return;
    if (props.own) {
      await session.logout().catch(() => undefined);
      endSession(REVOKED_OWN_KEY);
      return;
    }
    props.onDone();
    focusPageTitle();
  };
  return (
    <ConfirmDialog open title={`Revoke the key ${label}?`} confirmLabel="Revoke key" danger busy={revoke.busy} onConfirm={confirm} onCancel={props.onCancel}>
      <p>Every request made with it is refused from now on (401), over the API and SMTP. This cannot be undone.</p>
      {props.own && (
        <p class="banner banner-warn">
          <strong>This is the key you signed in with.</strong> Revoking it signs you out of the dashboard.
        </p>
      )}
      <ProblemBanner error={revoke.error} />
    </ConfirmDialog>
  );
}
