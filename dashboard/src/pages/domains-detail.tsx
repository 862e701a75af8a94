import { useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton } from '../components/copy-button';
import { Loading } from '../components/loading-page';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import { useAction } from '../components/use-action';
import { SaveStatus, useSave } from '../components/use-save';
import { useApi } from '../use-api';
import type { DomainDetail, SetupWarning, VerifyResult } from '../wire';
import { DeleteDomain, RotateKey, VerifySummary } from './domains-actions';
import { ChannelPicker } from './domains-form';
import { RecordList, WarningList } from './domains-records';

/** One domain: its DNS records with copy buttons, Verify, key rotation, its channels, delete. */
export function DomainPage(props: { id: string }) {
  const path = `/domains/${encodeURIComponent(props.id)}`;
  const domain = useApi(() => api.get<DomainDetail>(path), [props.id]);
  const verify = useAction();
  const [checked, setChecked] = useState<VerifyResult | null>(null);
  const d = domain.data;
  if (!d) return <Loading title="Domain" error={domain.error} />;
  const runVerify = async () => {
    setChecked(null);
    setChecked((await verify.run(() => api.post<VerifyResult>(`${path}/verify`))) ?? null);
    // Also after a failure: a record DNS did not answer for now says so (check: lookup_failed).
    domain.reload();
  };
  const actions = (
    <>
      <button type="button" class="button button-primary" disabled={verify.busy} onClick={runVerify}>
        {verify.busy ? 'Verifying…' : 'Verify'}
      </button>
      <RotateKey domain={d} onRotated={domain.reload} />
      <DeleteDomain domain={d} />
    </>
  );
  return (
    <>
      <PageHeader title={d.name} description={<StatusBadge status={d.verified ? 'verified' : 'pending'} />} actions={actions} />
      <ProblemBanner error={verify.error} />
      {checked && <VerifySummary result={checked} />}
      <Warnings warnings={d.warnings} />
      <section class="page-section" aria-labelledby="dns-title">
        <h2 id="dns-title">DNS records</h2>
        <p class="muted">Publish each record at your DNS provider, then press Verify. Some providers want the host without the domain at its end.</p>
        <RecordList records={d.dnsRecords} />
      </section>
      <DomainChannels domain={d} onSaved={domain.reload} />
      <dl class="facts">
        <dt>ID</dt>
        <dd>
          <code>{d.id}</code> <CopyButton text={d.id} label="Copy ID" />
        </dd>
        <dt>Added</dt>
        <dd>
          <RelativeTime at={d.createdAt} />
        </dd>
      </dl>
    </>
  );
}

/** The configuration's setup warnings (short host names, no DMARC report address). */
function Warnings(props: { warnings?: SetupWarning[] }) {
  if (!props.warnings || props.warnings.length === 0) return null;
  return (
    <div class="banner banner-warn" role="note" aria-label="Setup warnings">
      <strong>Setup warnings</strong>
      <WarningList warnings={props.warnings} />
    </div>
  );
}

/** The channels that send from the domain (PATCH /domains/{id} channelIds). */
function DomainChannels(props: { domain: DomainDetail; onSaved: () => void }) {
  const [ids, setIds] = useState(props.domain.channels.filter((c) => !c.deleted).map((c) => c.id));
  const save = useSave();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await save.run(() => api.patch(`/domains/${props.domain.id}`, { channelIds: ids }))) props.onSaved();
  };
  return (
    <section class="card page-section" aria-labelledby="domain-channels">
      <h2 id="domain-channels">Channels</h2>
      <SaveStatus save={save} />
      <form class="settings-form" onSubmit={submit}>
        <ChannelPicker value={ids} onChange={setIds} error={save.error} />
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={save.busy}>
            Save channels
          </button>
        </div>
      </form>
    </section>
  );
}
