import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { DataTable } from '../components/data-table';
import { Field } from '../components/field';
import { PageHeader } from '../components/page-header';
import { Pager } from '../components/pager';
import { ProblemBanner } from '../components/problem-banner';
import { useQueryState } from '../components/query-state';
import { RelativeTime } from '../components/relative-time';
import { Link } from '../router';
import { useApi } from '../use-api';
import type { Page, TemplateSummaryJson } from '../wire';

const LIMIT = 25;
const DEFAULTS = { name: '', offset: '0' };

/**
 * The stored templates (issue 34; GET /templates, 25 a page, filtered by part of the name, both
 * kept in the address) and the way to a new one.
 */
export function TemplatesPage() {
  const [q, setQ] = useQueryState('/templates', DEFAULTS);
  const offset = Number(q.offset) || 0;
  const list = useApi(() => api.get<Page<TemplateSummaryJson>>('/templates', { limit: LIMIT, offset, name: q.name }), [offset, q.name]);
  const actions = (
    <Link to="/templates/new" class="button button-primary">
      New template
    </Link>
  );
  return (
    <>
      <PageHeader title="Templates" description="Templates kept on the server, with their versions: sends name one, and its wording changes here." actions={actions} />
      <NameFilter value={q.name} onChange={(name) => setQ({ name, offset: '0' })} />
      <ProblemBanner error={list.error} />
      <DataTable
        caption="Templates"
        rows={list.data?.results}
        error={list.error}
        rowKey={(t) => t.id}
        columns={[
          { header: 'Name', cell: (t) => <Link to={`/templates/${t.id}`}>{t.name}</Link> },
          { header: 'Alias', cell: (t) => (t.alias ? <code>{t.alias}</code> : <span class="muted">—</span>) },
          { header: 'Active version', cell: (t) => `${t.activeVersion} of ${t.latestVersion}`, numeric: true },
          { header: 'Updated', cell: (t) => <RelativeTime at={t.updatedAt} /> },
        ]}
        empty={
          q.name
            ? { title: 'No template matches', next: 'Clear the name filter to see every template.' }
            : { title: 'No templates yet', next: <Link to="/templates/new">Create the first template</Link> }
        }
      />
      <Pager label="Templates" offset={offset} limit={LIMIT} total={list.data?.totalCount ?? 0} onChange={(o) => setQ({ ...q, offset: String(o) })} />
    </>
  );
}

/** Part of the name (case-insensitive), applied on submit. */
function NameFilter(props: { value: string; onChange: (name: string) => void }) {
  const [draft, setDraft] = useState(props.value);
  useEffect(() => setDraft(props.value), [props.value]);
  return (
    <form
      class="filters"
      aria-label="Template filters"
      onSubmit={(e) => {
        e.preventDefault();
        props.onChange(draft.trim());
      }}
    >
      <Field label="Name contains">{(a) => <input {...a} type="search" maxLength={100} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />}</Field>
      <button type="submit" class="button button-primary">
        Apply
      </button>
    </form>
  );
}
