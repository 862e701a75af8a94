import { api } from '../api';
import { CopyButton } from '../components/copy-button';
import { ProblemBanner } from '../components/problem-banner';
import { StatusBadge } from '../components/status-badge';
import { useAction } from '../components/use-action';
import { Link } from '../router';
import { useApi } from '../use-api';
import type { DnsRecord, DomainDetail, VerifyResult } from '../wire';
import { CHECK_WORDS, LastCheck } from './domains-records';

/**
 * The domains the routes are on (GET /domains/{id} for each one, once), for their inbound MX
 * record: `dnsRecords.inbound`, `<priority> <hostname>`, which mail for the domain needs to reach
 * the inbound listener (RFC 5321 5.1) and which Verify checks like the domain's other records.
 */
export function useRouteDomains(domainIds: string[]) {
  const key = [...new Set(domainIds)].sort().join(',');
  return useApi(async () => {
    const ids = key === '' ? [] : key.split(',');
    const found = await Promise.all(ids.map((id) => api.get<DomainDetail>(`/domains/${encodeURIComponent(id)}`)));
    return new Map(found.map((d) => [d.id, d]));
  }, [key]);
}

/** The last check in the domains page's words (found, missing, another value…), or "not checked yet". */
export function mxWords(r: DnsRecord): string {
  return r.check ? CHECK_WORDS[r.check.result] : 'not checked yet';
}

/** A routes table cell: what the last lookup of the domain's MX found, and the domain's page. */
export function MxCell(props: { domain: DomainDetail | undefined }) {
  const d = props.domain;
  if (!d) return <span class="muted">…</span>;
  const r = d.dnsRecords.inbound;
  return (
    <>
      {r ? <strong class={r.check ? `check-${r.check.result}` : undefined}>{mxWords(r)}</strong> : <span class="muted">—</span>}
      <small class="muted event-kind">
        on <Link to={`/domains/${d.id}`}>{d.name}</Link>
      </small>
    </>
  );
}

/**
 * A route's page: the MX record of its domain to publish (host and value with copy buttons), what
 * the last lookup found, and Check now (POST /domains/{id}/verify, which looks up every record
 * of the domain and keeps what it found).
 */
export function RouteMx(props: { domainId: string }) {
  const path = `/domains/${encodeURIComponent(props.domainId)}`;
  const domain = useApi(() => api.get<DomainDetail>(path), [path]);
  const verify = useAction();
  const check = async () => {
    await verify.run(() => api.post<VerifyResult>(`${path}/verify`));
    domain.reload();
  };
  const d = domain.data;
  const r = d?.dnsRecords.inbound;
  return (
    <section class="card page-section" aria-labelledby="route-mx">
      <h2 id="route-mx">MX record</h2>
      <ProblemBanner error={domain.error ?? verify.error} />
      {d && (
        <p class="muted">
          Mail for <Link to={`/domains/${d.id}`}>{d.name}</Link> reaches postrider only once its MX record names this host. Publish it at your DNS provider.
        </p>
      )}
      {r && (
        <dl class="dns-fields">
          <dt>Host</dt>
          <dd>
            <code class="code-box">{r.host}</code>
            <CopyButton text={r.host} label="Copy host" />
          </dd>
          <dt>Value</dt>
          <dd>
            <code class="code-box">{r.value}</code>
            <CopyButton text={r.value} label="Copy value" />
          </dd>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={r.status} />
          </dd>
          <dt>Last check</dt>
          <dd>
            <LastCheck record={r} />
          </dd>
        </dl>
      )}
      {d && (
        <div class="actions page-section">
          <button type="button" class="button" disabled={verify.busy} onClick={check}>
            {verify.busy ? 'Checking…' : 'Check DNS now'}
          </button>
        </div>
      )}
    </section>
  );
}
