import { useState } from 'preact/hooks';
import { api } from '../api';
import { DeleteButton } from '../components/delete-button';
import { ProblemBanner } from '../components/problem-banner';
import { SigningKey } from '../components/signing-key';
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

/** The signing key of the webhook (components/signing-key.tsx). */
export function WebhookSigningKey(props: { webhook: Webhook; onRegenerated: () => void }) {
  return (
    <SigningKey
      signingKey={props.webhook.payloadSigningKey}
      regeneratePath={`/webhooks/${props.webhook.id}/regenerate-signing-key`}
      what="Your endpoint checks the X-Service-Webhook-Signature header of each delivery with this key."
      onRegenerated={props.onRegenerated}
    />
  );
}

export function DeleteWebhook(props: { webhook: Webhook }) {
  return (
    <DeleteButton label="Delete webhook" title="Delete this webhook?" path={`/webhooks/${props.webhook.id}`} back="/webhooks">
      <p>Nothing more is sent to {props.webhook.url}. This cannot be undone.</p>
    </DeleteButton>
  );
}
