import { api } from '../api';
import { DataTable } from '../components/data-table';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { Link } from '../router';
import { useApi } from '../use-api';
import type { Page, TemplateJson, TemplateVersionJson } from '../wire';
import { useActivate } from './templates-actions';

/** GET /templates/{id}/versions, newest first: each opens with ?version=N; Activate for the inactive ones. */
export function TemplateVersions(props: { template: TemplateJson; onActivated: (notice: string) => void }) {
  const t = props.template;
  const list = useApi(() => api.get<Page<TemplateVersionJson>>(`/templates/${encodeURIComponent(t.id)}/versions`), [t.id, t.updatedAt]);
  const activate = useActivate(t.id, props.onActivated);
  const rows = list.data ? [...list.data.results].reverse() : undefined;
  return (
    <section class="page-section" aria-labelledby="tpl-versions">
      <h2 id="tpl-versions">Versions</h2>
      <ProblemBanner error={list.error ?? activate.error} />
      <DataTable
        caption="Template versions"
        rows={rows}
        error={list.error}
        rowKey={(v) => String(v.version)}
        columns={[
          { header: 'Version', cell: (v) => <VersionLink template={t} version={v.version} /> },
          { header: 'Subject', cell: (v) => v.subject },
          { header: 'Parts', cell: (v) => [v.html !== null ? 'HTML' : '', v.text !== null ? 'text' : ''].filter(Boolean).join(', ') },
          { header: 'Created', cell: (v) => <RelativeTime at={v.createdAt} /> },
          {
            header: 'State',
            cell: (v) =>
              v.version === t.activeVersion ? (
                <StatusBadge status="active" />
              ) : (
                <button type="button" class="button button-small" disabled={activate.busy} onClick={() => activate.run(v.version)} aria-label={`Activate version ${v.version}`}>
                  Activate
                </button>
              ),
          },
        ]}
        empty={{ title: 'No versions', next: 'Every template has at least one: reload the page.' }}
      />
    </section>
  );
}

function VersionLink(props: { template: TemplateJson; version: number }) {
  const label = `Version ${props.version}`;
  if (props.version === props.template.version.version) return <strong aria-current="true">{label} (shown)</strong>;
  return <Link to={`/templates/${props.template.id}?version=${props.version}`}>{label}</Link>;
}
