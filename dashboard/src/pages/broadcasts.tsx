import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { ChannelSelect, NoChannelYet, useChannelOptions } from '../components/channel-select';
import { useQueryState } from '../components/query-state';
import { DataTable } from '../components/data-table';
import { Field } from '../components/field';
import { PageHeader } from '../components/page-header';
import { Pager } from '../components/pager';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { Link } from '../router';
import { useApi } from '../use-api';
import type { BroadcastSummary, Page } from '../wire';
import { BROADCAST_STATUSES } from './broadcasts-types';
import { BroadcastSendForm } from './broadcasts-send';

const LIMIT = 25;
const DEFAULTS = { channelId: '', status: '', subject: '', offset: '0' };

interface BroadcastFilter {
  channelId: string;
  status: string;
  subject: string;
}

/** GET /broadcasts of a channel (status and subject filters, 25 a page) and a form to send one. */
export function BroadcastsPage() {
  const channels = useChannelOptions();
  const [q, setQ] = useQueryState('/broadcasts', DEFAULTS);
  const offset = Number(q.offset) || 0;
  const setOffset = (o: number) => setQ({ ...q, offset: String(o) });
  const firstChannel = channels.data?.results[0]?.id ?? '';
  const filter = useMemo(() => ({ channelId: q.channelId || firstChannel, status: q.status, subject: q.subject }), [q, firstChannel]);
  const list = useApi(
    () => (filter.channelId ? api.get<Page<BroadcastSummary>>('/broadcasts', { ...filter, limit: LIMIT, offset }) : Promise.resolve(null)),
    [filter, offset],
  );
  const noChannels = channels.data?.results.length === 0;
  return (
    <>
      <PageHeader title="Broadcasts" description="One template sent to many recipients: progress, failures and suppressed recipients of each." />
      <ProblemBanner error={channels.error ?? list.error} />
      {noChannels ? (
        <NoChannelYet why="A broadcast is sent through a channel." then="and link a domain to it first." />
      ) : (
        <>
          <BroadcastFilters value={filter} channels={channels.data?.results ?? []} onChange={(f) => setQ({ ...f, offset: '0' })} />
          <BroadcastTable rows={list.data?.results} error={list.error} filtered={!!(filter.status || filter.subject)} />
          <Pager label="Broadcasts" offset={offset} limit={LIMIT} total={list.data?.totalCount ?? 0} onChange={setOffset} />
          {channels.data && <BroadcastSendForm channels={channels.data.results} channelId={filter.channelId} />}
        </>
      )}
    </>
  );
}

function BroadcastTable(props: { rows: BroadcastSummary[] | undefined; error: unknown; filtered: boolean }) {
  return (
    <DataTable
      caption="Broadcasts"
      rows={props.rows}
      error={props.error}
      rowKey={(b) => b.id}
      columns={[
        { header: 'Subject', cell: (b) => <Link to={`/broadcasts/${b.id}`}>{b.subject || '(no subject)'}</Link> },
        { header: 'Status', cell: (b) => <StatusBadge status={b.status} /> },
        { header: 'Done', cell: (b) => b.completion, numeric: true },
        { header: 'Messages', cell: (b) => b.messages.toLocaleString(), numeric: true },
        { header: 'Created', cell: (b) => <RelativeTime at={b.createdAt} /> },
      ]}
      empty={{
        title: props.filtered ? 'No broadcast matches these filters' : 'No broadcasts on this channel',
        next: props.filtered ? (
          'Clear the status or subject filter to see every broadcast of this channel.'
        ) : (
          <>
            Send one with the form below, or through <code>POST /send/broadcast</code> (docs/api.md, "Sending").
          </>
        ),
      }}
    />
  );
}

function BroadcastFilters(props: { value: BroadcastFilter; channels: { id: string; name: string; deliveryType: 'live' | 'sandbox' }[]; onChange: (f: BroadcastFilter) => void }) {
  const [draft, setDraft] = useState(props.value);
  useEffect(() => setDraft(props.value), [props.value]);
  const set = (patch: Partial<BroadcastFilter>) => setDraft({ ...draft, ...patch });
  return (
    <form class="filters" aria-label="Broadcast filters" onSubmit={(e) => (e.preventDefault(), props.onChange(draft))}>
      <Field label="Channel">{(a) => <ChannelSelect {...a} channels={props.channels} value={draft.channelId} onChange={(channelId) => set({ channelId })} />}</Field>
      <Field label="Status">
        {(a) => (
          <select {...a} value={draft.status} onChange={(e) => set({ status: e.currentTarget.value })}>
            <option value="">Any status</option>
            {BROADCAST_STATUSES.map((s) => (
              <option value={s} key={s}>
                {s}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Subject contains">{(a) => <input {...a} type="search" value={draft.subject} onInput={(e) => set({ subject: e.currentTarget.value })} />}</Field>
      <button type="submit" class="button button-primary">
        Apply
      </button>
    </form>
  );
}
