import { useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { NoChannelYet, useChannelOptions } from '../components/channel-select';
import { useQueryState } from '../components/query-state';
import { ConfirmDialog } from '../components/confirm-dialog';
import { DataTable } from '../components/data-table';
import { focusPageTitle } from '../components/focus';
import { PageHeader } from '../components/page-header';
import { Pager } from '../components/pager';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { useAction } from '../components/use-action';
import { useApi } from '../use-api';
import type { Page, Suppression } from '../wire';
import { SuppressionFilters, type SuppressionFilter } from './suppressions-filters';
import { SuppressionAddForm } from './suppressions-form';

const LIMIT = 25;
const DEFAULTS = { channelId: '', mailType: 'transactional', reason: '', email: '', offset: '0' };

/**
 * GET /suppressions of a channel and mail type (filtered by reason and address, 25 a page),
 * POST /suppressions to add addresses by hand, POST /suppressions/remove (confirmed) to let an
 * address receive mail again.
 */
export function SuppressionsPage() {
  const channels = useChannelOptions();
  const [q, setQ] = useQueryState('/suppressions', DEFAULTS);
  const chosen = q as SuppressionFilter & { offset: string };
  const offset = Number(q.offset) || 0;
  const setFilter = (f: SuppressionFilter) => setQ({ ...f, offset: '0' });
  const setOffset = (o: number) => setQ({ ...q, offset: String(o) });
  const firstChannel = channels.data?.results[0]?.id ?? '';
  const filter = useMemo(
    () => ({ channelId: chosen.channelId || firstChannel, mailType: chosen.mailType, reason: chosen.reason, email: chosen.email }),
    [chosen, firstChannel],
  );
  const list = useApi(
    () => (filter.channelId ? api.get<Page<Suppression>>('/suppressions', { ...filter, limit: LIMIT, offset }) : Promise.resolve(null)),
    [filter.channelId, filter.mailType, filter.reason, filter.email, offset],
  );
  const noChannels = channels.data?.results.length === 0;
  return (
    <>
      <PageHeader title="Suppressions" description="Addresses a channel does not send to: hard bounces, complaints, unsubscribes and the ones added by hand." />
      <ProblemBanner error={channels.error ?? list.error} />
      {noChannels ? (
        <NoChannelYet why="Suppressions belong to a channel." then="first." />
      ) : (
        <>
          <SuppressionFilters value={filter} channels={channels.data?.results ?? []} onChange={setFilter} />
          <SuppressionTable rows={list.data?.results} error={list.error} filter={filter} onRemoved={list.reload} />
          <Pager label="Suppressions" offset={offset} limit={LIMIT} total={list.data?.totalCount ?? 0} onChange={setOffset} />
          <section class="card page-section" aria-labelledby="add-suppressions">
            <h2 id="add-suppressions">Add suppressions</h2>
            {channels.data && <SuppressionAddForm channels={channels.data.results} channelId={filter.channelId} mailType={filter.mailType} onAdded={list.reload} />}
          </section>
        </>
      )}
    </>
  );
}

function SuppressionTable(props: { rows: Suppression[] | undefined; error: unknown; filter: SuppressionFilter; onRemoved: () => void }) {
  const [target, setTarget] = useState<string | null>(null);
  const remove = useAction();
  const confirm = async () => {
    const { channelId, mailType } = props.filter;
    const done = await remove.run(() => api.post('/suppressions/remove', { channelId, mailType, emails: [target] }));
    if (done) (setTarget(null), props.onRemoved(), focusPageTitle());
  };
  const filtered = props.filter.reason || props.filter.email;
  return (
    <>
      <DataTable
        caption="Suppressed addresses"
        rows={props.rows}
        error={props.error}
        rowKey={(s) => s.email}
        columns={[
          { header: 'Address', cell: (s) => <code>{s.email}</code> },
          { header: 'Reason', cell: (s) => <StatusBadge status={s.reason} /> },
          { header: 'Since', cell: (s) => <RelativeTime at={s.createdAt} /> },
          {
            header: 'Actions',
            cell: (s) => (
              <button type="button" class="button button-small" aria-label={`Remove ${s.email}`} onClick={() => (remove.clear(), setTarget(s.email))}>
                Remove
              </button>
            ),
          },
        ]}
        empty={{
          title: filtered ? 'No suppression matches these filters' : 'No suppressed addresses',
          next: filtered
            ? 'Clear the reason or address filter to see every suppression of this channel and mail type.'
            : 'Addresses appear here when mail to them bounces hard, the recipient complains or unsubscribes. Add one by hand below.',
        }}
      />
      <ConfirmDialog open={target !== null} title="Remove this suppression?" confirmLabel="Remove" danger busy={remove.busy} onConfirm={confirm} onCancel={() => setTarget(null)}>
        <ProblemBanner error={remove.error} />
        <p>
          <code>{target}</code> will receive {props.filter.mailType} mail of this channel again.
        </p>
      </ConfirmDialog>
    </>
  );
}
