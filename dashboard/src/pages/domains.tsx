import { api } from '../api';
import { DataTable } from '../components/data-table';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { useAction } from '../components/use-action';
import { Link, navigate } from '../router';
import { useApi } from '../use-api';
import type { DomainChannel, DomainDetail, DomainSummary, Page } from '../wire';
import { DomainCreateForm, type NewDomain } from './domains-form';

/** GET /domains and the form to add one, which opens the new domain's page with its records. */
export function DomainsPage() {
  const list = useApi(() => api.get<Page<DomainSummary>>('/domains', { limit: 500 }), []);
  const create = useAction();
  const submit = async (v: NewDomain) => {
    const made = await create.run(() => api.post<DomainDetail>('/domains', v));
    if (made) navigate(`/domains/${made.id}`);
  };
  return (
    <>
      <PageHeader title="Domains" description="The domains you send from: publish their DNS records, then verify them." />
      <ProblemBanner error={list.error} />
      <DataTable
        caption="Domains"
        rows={list.data?.results}
        error={list.error}
        rowKey={(d) => d.id}
        columns={[
          { header: 'Domain', cell: (d) => <Link to={`/domains/${d.id}`}>{d.name}</Link> },
          { header: 'Status', cell: (d) => <StatusBadge status={d.verified ? 'verified' : 'pending'} /> },
          { header: 'Channels', cell: (d) => channelNames(d.channels) },
          { header: 'Added', cell: (d) => <RelativeTime at={d.createdAt} /> },
        ]}
        empty={{ title: 'No domains yet', next: 'Add the domain of your From addresses below, then publish the DNS records it shows.' }}
      />
      {list.data && list.data.totalCount > list.data.results.length && (
        <p class="muted">
          Showing {list.data.results.length} of {list.data.totalCount} domains.
        </p>
      )}
      <section class="card page-section" aria-labelledby="new-domain">
        <h2 id="new-domain">Add a domain</h2>
        <ProblemBanner error={create.error} />
        <DomainCreateForm busy={create.busy} error={create.error} onSubmit={submit} />
      </section>
    </>
  );
}

export function channelNames(channels: DomainChannel[]): string {
  const live = channels.filter((c) => !c.deleted);
  return live.length === 0 ? '—' : live.map((c) => c.name).join(', ');
}
