import { CopyButton } from '../components/copy-button';
import { RelativeTime } from '../components/relative-time';
import { StatusBadge } from '../components/status-badge';
import type { DmarcRecord, DnsRecord, DnsRecordCheck, DnsRecords, SetupWarning } from '../wire';

export interface RecordRow {
  key: string;
  label: string;
  note: string;
  /** Counts for the domain's `verified` (docs/api.md, "Domains and DNS"); the others are optional or advisory. */
  required: boolean;
  /** `inheritedFrom` on the DMARC row only. */
  record: DmarcRecord;
}

const algorithmOf = (r: DnsRecord) => /k=(\w+)/.exec(r.value)?.[1] ?? 'rsa';
const RETURN_PATH: Record<DnsRecord['type'], string> = { mx: 'Return path MX (bounces come back here)', txt: 'Return path SPF', cname: 'Return path CNAME' };

/** Every record of the answer, in the order to publish them, with what each is for. */
export function recordRows(d: DnsRecords): RecordRow[] {
  const rows: (RecordRow | null)[] = [
    { key: 'dk', label: `DKIM key (${algorithmOf(d.domainKeyActive)})`, note: 'Signs your mail now.', required: true, record: d.domainKeyActive },
    d.domainKeyActiveCompanion ? { key: 'dkc', label: 'DKIM RSA companion', note: 'Signs beside the ed25519 key for receivers without ed25519 (RFC 8463 3).', required: true, record: d.domainKeyActiveCompanion } : null,
    d.domainKeyPending ? { key: 'dkp', label: `Next DKIM key (${algorithmOf(d.domainKeyPending)})`, note: 'Publish it beside the current key: Verify makes it active once it is found.', required: false, record: d.domainKeyPending } : null,
    d.domainKeyPendingCompanion ? { key: 'dkpc', label: 'Next DKIM RSA companion', note: 'Publish with the next key: the pair becomes active together.', required: false, record: d.domainKeyPendingCompanion } : null,
    ...d.returnPath.map((r, i) => ({ key: `rp${i}`, label: RETURN_PATH[r.type], note: 'Bounces and SPF checks use this host.', required: true, record: r })),
    d.tracking ? { key: 'tr', label: 'Tracking link host (optional)', note: 'Click and open links of mail from this domain use this host once verified.', required: false, record: d.tracking } : null,
    d.unsubscribe ? { key: 'un', label: 'Unsubscribe link host (optional)', note: 'Unsubscribe links use this host once verified.', required: false, record: d.unsubscribe } : null,
    d.inbound ? { key: 'in', label: 'Inbound MX (mail for the domain comes here)', note: 'Mail to the inbound routes of this domain reaches postrider through this record.', required: false, record: d.inbound } : null,
    { key: 'dmarc', label: 'DMARC (advisory)', note: dmarcNote(d.dmarc), required: false, record: d.dmarc },
  ];
  return rows.filter((r): r is RecordRow => r !== null);
}

function dmarcNote(r: DmarcRecord): string {
  if (r.inheritedFrom) return `Inherited from ${r.inheritedFrom}, the Organizational Domain (RFC 7489 6.6.3): nothing to publish.`;
  return 'Large mailbox providers require DMARC of bulk senders; p=none only asks for reports.';
}

/** The last check's result in words: "found", "missing", "another value", "could not be looked up". */
export const CHECK_WORDS: Record<DnsRecordCheck['result'], string> = {
  match: 'found',
  missing: 'missing',
  mismatch: 'another value',
  lookup_failed: 'could not be looked up',
};

/** The records as cards (not a table: long TXT values wrap inside the card at 360 px). */
export function RecordList(props: { records: DnsRecords }) {
  return (
    <ul class="dns-records">
      {recordRows(props.records).map((row) => (
        <li class="dns-record" key={row.key}>
          <div class="dns-record-head">
            <h3>{row.label}</h3>
            <span class="badge badge-neutral">{row.record.type.toUpperCase()}</span>
            <StatusBadge status={row.record.status} />
          </div>
          <p class="muted dns-note">{row.note}</p>
          <dl class="dns-fields">
            <dt>Host</dt>
            <dd>
              <code class="code-box">{row.record.host}</code>
              <CopyButton text={row.record.host} label="Copy host" />
            </dd>
            <dt>Value</dt>
            <dd>
              <code class="code-box">{row.record.value}</code>
              <CopyButton text={row.record.value} label="Copy value" />
            </dd>
            <dt>Last check</dt>
            <dd>
              <LastCheck record={row.record} />
            </dd>
          </dl>
          {row.record.replaces && <ReplacedNote replaces={row.record.replaces} />}
          <WarningList warnings={row.record.warnings} class="dns-warnings" label="Warnings" />
        </li>
      ))}
    </ul>
  );
}

/** What the last lookup found, and when: for another value, the values found (as DNS answered them, capped by the daemon). */
export function LastCheck(props: { record: DnsRecord }) {
  const { check, lastCheckedAt } = props.record;
  if (!check) return lastCheckedAt ? <RelativeTime at={lastCheckedAt} /> : <span>not yet</span>;
  const found = check.found ?? [];
  const when = (
    <span class="muted">
      {found.length ? '' : ', '}checked <RelativeTime at={check.checkedAt} />
    </span>
  );
  return (
    <div class="dns-check">
      <p>
        <strong class={`check-${check.result}`}>{CHECK_WORDS[check.result]}{found.length ? ':' : ''}</strong>
        {found.length ? null : when}
      </p>
      {found.length > 0 && (
        <ul class="plain-list" aria-label="Values found">
          {found.map((v, i) => (
            <li key={i}>
              <code class="code-box">{v}</code>
            </li>
          ))}
        </ul>
      )}
      {check.foundTruncated && <p class="muted">More was found than is shown (values cut or left out).</p>}
      {found.length > 0 && <p>{when}</p>}
    </div>
  );
}

/** A return-path record that replaces the one the domain was verified with under earlier settings. */
function ReplacedNote(props: { replaces: NonNullable<DnsRecord['replaces']> }) {
  const r = props.replaces;
  return (
    <div class="dns-replaces" role="note" aria-label="Replaced record">
      <p>
        Replaces the record the domain was verified with: the old value is still accepted until this one is found, so keep it published until Verify
        finds the new one.
      </p>
      <dl class="dns-fields">
        <dt>Old host</dt>
        <dd>
          <code class="code-box">{r.host}</code>
        </dd>
        <dt>Old value</dt>
        <dd>
          <code class="code-box">{r.value}</code>
        </dd>
        <dt>Checked</dt>
        <dd>{r.lastCheckedAt ? <RelativeTime at={r.lastCheckedAt} /> : 'not yet'}</dd>
      </dl>
    </div>
  );
}

/** Setup warnings: why a record cannot work as published, and the setting to change. */
export function WarningList(props: { warnings?: SetupWarning[]; class?: string; label?: string }) {
  if (!props.warnings?.length) return null;
  return (
    <ul class={props.class} aria-label={props.label}>
      {props.warnings.map((w) => (
        <li key={w.code}>
          {w.message} <small>(setting <code>{w.setting}</code>)</small>
        </li>
      ))}
    </ul>
  );
}
