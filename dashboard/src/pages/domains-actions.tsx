import { useState } from 'preact/hooks';
import { api } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { DeleteButton } from '../components/delete-button';
import { ProblemBanner } from '../components/problem-banner';
import { useAction } from '../components/use-action';
import type { DnsRecords, DomainDetail, RotatedKey } from '../wire';
import { recordRows } from './domains-records';

/** What the last Verify found: all required records verified, or which are not (and why that matters). */
export function VerifySummary(props: { records: DnsRecords }) {
  const rows = recordRows(props.records);
  const missing = rows.filter((r) => r.required && r.record.status !== 'verified');
  const optional = rows.filter((r) => !r.required && r.record.status !== 'verified' && !r.record.inheritedFrom);
  if (missing.length === 0 && optional.length === 0) {
    return (
      <p class="banner banner-ok" role="status">
        Verified: every record was found.
      </p>
    );
  }
  return (
    <div class={missing.length ? 'banner banner-warn' : 'banner banner-ok'} role="status">
      <strong>{missing.length ? 'Not verified yet.' : 'Verified: the domain can send.'}</strong>
      <ul>
        {missing.map((r) => (
          <li key={r.key}>
            {r.label} is {r.record.status}: publish it as shown below (DNS changes can take a while to appear).
          </li>
        ))}
        {optional.map((r) => (
          <li key={r.key}>
            {r.label} is {r.record.status} (optional).
          </li>
        ))}
      </ul>
    </div>
  );
}

/** POST /domains/{id}/rotate-key behind a dialog that says what a rotation does. */
export function RotateKey(props: { domain: DomainDetail; onRotated: () => void }) {
  const [open, setOpen] = useState(false);
  const [algorithm, setAlgorithm] = useState<'rsa' | 'ed25519'>(/k=ed25519/.test(props.domain.dnsRecords.domainKeyActive.value) ? 'ed25519' : 'rsa');
  const rotate = useAction();
  const confirm = async () => {
    if (await rotate.run(() => api.post<RotatedKey>(`/domains/${props.domain.id}/rotate-key`, { dkimAlgorithm: algorithm }))) (setOpen(false), props.onRotated());
  };
  return (
    <>
      <button type="button" class="button" onClick={() => setOpen(true)}>
        Rotate DKIM key
      </button>
      {open && (<ConfirmDialog open={open} title="Rotate the DKIM key?" confirmLabel="Create new key" busy={rotate.busy} onConfirm={confirm} onCancel={() => setOpen(false)}>
        <p>
          A new key is made and listed as “Next DKIM key”. The current key keeps signing until you publish the new record beside it and Verify finds it; then
          the new key signs. {props.domain.dnsRecords.domainKeyPending ? 'The next key not yet published is replaced.' : ''}
        </p>
        <div class="field">
          <label for="rotate-algorithm">Algorithm</label>
          <select id="rotate-algorithm" value={algorithm} onChange={(e) => setAlgorithm(e.currentTarget.value as 'rsa' | 'ed25519')}>
            <option value="rsa">RSA-2048</option>
            <option value="ed25519">ed25519 (with an RSA companion)</option>
          </select>
        </div>
        <ProblemBanner error={rotate.error} />
      </ConfirmDialog>)}
    </>
  );
}

export function DeleteDomain(props: { domain: DomainDetail }) {
  return (
    <DeleteButton label="Delete domain" title={`Delete ${props.domain.name}?`} path={`/domains/${props.domain.id}`} back="/domains">
      <p>Its channels can no longer send from {props.domain.name}, and its DKIM keys are destroyed: adding it again makes new keys to publish.</p>
    </DeleteButton>
  );
}
