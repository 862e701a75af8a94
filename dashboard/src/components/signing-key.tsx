import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import { api } from '../api';
import { ConfirmDialog } from './confirm-dialog';
import { CopyButton } from './copy-button';
import { ProblemBanner } from './problem-banner';
import { useAction } from './use-action';

/**
 * The payload signing key of a webhook or an inbound route (both sign with the webhooks'
 * `t=…,v1=…` scheme): hidden until asked, and its regeneration (POST `regeneratePath`) behind a
 * dialog; the new key is shown once in a banner with its Copy button.
 */
export function SigningKey(props: { signingKey: string; regeneratePath: string; what: ComponentChildren; onRegenerated: () => void }) {
  const [open, setOpen] = useState(false);
  const [fresh, setFresh] = useState<string | null>(null);
  const regen = useAction();
  const titleId = useId();
  const confirm = async () => {
    const r = await regen.run(() => api.post<{ payloadSigningKey: string }>(props.regeneratePath));
    if (r) (setFresh(r.payloadSigningKey), setOpen(false), props.onRegenerated());
  };
  return (
    <section class="card page-section" aria-labelledby={titleId}>
      <h2 id={titleId}>Signing key</h2>
      <p class="muted">{props.what}</p>
      {fresh ? (
        <div class="banner banner-ok" role="status">
          <strong>New signing key.</strong> Put it in your endpoint now: the old key no longer signs.
          <div class="key-line">
            <code class="code-box" data-testid="new-signing-key">{fresh}</code> <CopyButton text={fresh} label="Copy key" />
          </div>
        </div>
      ) : (
        <details class="key-reveal">
          <summary>Show the current key</summary>
          <div class="key-line">
            <code class="code-box">{props.signingKey}</code> <CopyButton text={props.signingKey} label="Copy key" />
          </div>
        </details>
      )}
      <div class="actions">
        <button type="button" class="button" onClick={() => setOpen(true)}>
          Regenerate signing key
        </button>
      </div>
      {open && (
        <ConfirmDialog open title="Regenerate the signing key?" confirmLabel="Regenerate" danger busy={regen.busy} onConfirm={confirm} onCancel={() => setOpen(false)}>
          <p>The current key stops signing at once (deliveries already under way finish with it). Until your endpoint has the new key, it will reject the deliveries.</p>
          <ProblemBanner error={regen.error} />
        </ConfirmDialog>
      )}
    </section>
  );
}
