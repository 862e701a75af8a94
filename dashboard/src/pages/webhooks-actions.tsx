import { useState } from 'preact/hooks';
import { api } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { CopyButton } from '../components/copy-button';
import { DeleteButton } from '../components/delete-button';
import { ProblemBanner } from '../components/problem-banner';
import { StatusBadge } from '../components/status-badge';
import { useAction } from '../components/use-action';
import type { EventType, Webhook, WebhookTestOutcome } from '../wire';
import { deliveryOutcome } from './webhooks';

/** POST /webhooks/{id}/test: one signed test event now, and what the endpoint answered. */
export function TestEvent(props: { webhook: Webhook }) {
  const [eventType, setEventType] = useState<EventType>(props.webhook.events[0]);
  const test = useAction();
  const [outcome, setOutcome] = useState<WebhookTestOutcome | null>(null);
  const send = async () => {
    setOutcome(null);
    const r = await test.run(() => api.post<WebhookTestOutcome>(`/webhooks/${props.webhook.id}/test`, { eventType }));
    if (r) setOutcome(r);
  };
  return (
    <div class="test-event">
      <div class="field">
        <label for="test-event-type">Test event type</label>
        <select id="test-event-type" value={eventType} onChange={(e) => setEventType(e.currentTarget.value as EventType)}>
          {props.webhook.events.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </div>
      <button type="button" class="button" disabled={test.busy} onClick={send}>
        {test.busy ? 'Sending…' : 'Send test event'}
      </button>
      <ProblemBanner error={test.error} />
      {outcome && (
        <p class={deliveryOutcome(outcome) === 'delivered' ? 'banner banner-ok' : 'banner banner-warn'} role="status" data-testid="test-outcome">
          <StatusBadge status={deliveryOutcome(outcome)} /> Test {outcome.eventType} event: {outcome.statusCode === null ? 'no answer' : `HTTP ${outcome.statusCode}`} in {outcome.ms} ms
          {outcome.error && <>. {outcome.error}</>}
        </p>
      )}
    </div>
  );
}

/** The signing key (hidden until asked) and its regeneration behind a dialog. */
export function SigningKey(props: { webhook: Webhook; onRegenerated: () => void }) {
  const [open, setOpen] = useState(false);
  const [fresh, setFresh] = useState<string | null>(null);
  const regen = useAction();
  const confirm = async () => {
    const r = await regen.run(() => api.post<Webhook>(`/webhooks/${props.webhook.id}/regenerate-signing-key`));
    if (r) (setFresh(r.payloadSigningKey), setOpen(false), props.onRegenerated());
  };
  return (
    <section class="card page-section" aria-labelledby="wh-key">
      <h2 id="wh-key">Signing key</h2>
      <p class="muted">Your endpoint checks the X-Service-Webhook-Signature header of each delivery with this key.</p>
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
            <code class="code-box">{props.webhook.payloadSigningKey}</code> <CopyButton text={props.webhook.payloadSigningKey} label="Copy key" />
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

export function DeleteWebhook(props: { webhook: Webhook }) {
  return (
    <DeleteButton label="Delete webhook" title="Delete this webhook?" path={`/webhooks/${props.webhook.id}`} back="/webhooks">
      <p>Nothing more is sent to {props.webhook.url}. This cannot be undone.</p>
    </DeleteButton>
  );
}
