import { useState } from 'preact/hooks';
import { api } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { DeleteButton } from '../components/delete-button';
import { ProblemBanner } from '../components/problem-banner';
import { useAction } from '../components/use-action';
import type { DomainDetail, RotatedKey, VerifyResult } from '../wire';
import { CHECK_WORDS, recordRows } from './domains-records';

/**
 * What Verify answered: whether the domain is verified now (the answer's `verified`), and each
 * record not found with what the lookup saw instead. A required record may be pending while the
 * record it replaces still counts (docs/api.md "Domains and DNS").
 */
export function VerifySummary(props: { result: VerifyResult }) {
  const rows = recordRows(props.result).filter((r) => r.record.status !== 'verified' && !r.record.inheritedFrom);
  const verified = props.result.verified;
  if (verified && rows.length === 0) {
    return (
      <p class="banner banner-ok" role="status">
        Verified: every record was found.
      </p>
    );
  }
  return (
    <div class={verified ? 'banner banner-ok' : 'banner banner-warn'} role="status">
      <strong>{verified ? 'Verified: the domain can send.' : 'Not verified yet: a live channel cannot send from this domain.'}</strong>
      <ul>
        {rows.map((r) => (
          <li key={r.key}>
            {r.label}: {r.record.check ? CHECK_WORDS[r.record.check.result] : r.record.status}
            {r.record.replaces ? '; the old value is still accepted until this one is found.' : r.required ? '; publish it as shown below (DNS changes can take a while to appear).' : '; not needed to send.'}
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
