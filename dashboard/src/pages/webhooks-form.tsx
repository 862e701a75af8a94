import { useState } from 'preact/hooks';
import { Choice, ChoiceGroup } from '../components/choice-group';
import { useChannelOptions } from '../components/channel-select';
import { Field } from '../components/field';
import { HeadersEditor } from '../components/headers-editor';
import { SubmitRow } from '../components/submit-row';
import type { Webhook } from '../wire';
import { EVENT_TYPES } from './message-types';

/** Every field POST and PATCH /webhooks accept (src/http/routes/webhooks.ts), as the answer has them. */
export type WebhookInput = Pick<Webhook, 'url' | 'events' | 'channelId' | 'enabled' | 'additionalHeaders'>;

export const NEW_WEBHOOK: WebhookInput = { url: '', events: ['delivered', 'bounced', 'complained'], channelId: null, enabled: true, additionalHeaders: [] };

/** The webhook's fields; the problem body's messages show beside each. */
export function WebhookForm(props: { initial: WebhookInput; submitLabel: string; busy: boolean; error: unknown; onSubmit: (v: WebhookInput) => void }) {
  const [v, setV] = useState(props.initial);
  const set = (patch: Partial<WebhookInput>) => setV({ ...v, ...patch });
  const pick = ({ url, events, channelId, enabled, additionalHeaders }: WebhookInput) => ({ url, events, channelId, enabled, additionalHeaders });
  return (
    <form
      class="settings-form"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit(pick(v));
      }}
    >
      <Field label="Endpoint URL" pointer="/url" error={props.error} hint="Events are POSTed here as signed JSON (https; http only where the server allows it).">
        {(a) => <input {...a} type="url" required autoComplete="off" value={v.url} onInput={(e) => set({ url: e.currentTarget.value })} />}
      </Field>
      <ChoiceGroup legend="Events" pointers={['/events']} error={props.error} hint="At least one.">
        <div class="choice-list choice-columns">
          {EVENT_TYPES.map((t) => (
            <Choice key={t} type="checkbox" name="events" value={t} checked={v.events.includes(t)} onChange={(on) => set({ events: on ? [...v.events, t] : v.events.filter((x) => x !== t) })}>
              {t}
            </Choice>
          ))}
        </div>
      </ChoiceGroup>
      <ChannelField value={v.channelId} error={props.error} onChange={(channelId) => set({ channelId })} />
      <ChoiceGroup legend="State" pointers={['/enabled']} error={props.error}>
        <Choice type="checkbox" name="enabled" checked={v.enabled} onChange={(enabled) => set({ enabled })}>
          Enabled (a disabled webhook receives nothing)
        </Choice>
      </ChoiceGroup>
      <HeadersEditor value={v.additionalHeaders} error={props.error} onChange={(additionalHeaders) => set({ additionalHeaders })} />
      <SubmitRow label={props.submitLabel} busy={props.busy} />
    </form>
  );
}

function ChannelField(props: { value: string | null; error: unknown; onChange: (id: string | null) => void }) {
  const channels = useChannelOptions();
  return (
    <Field label="Channel" pointer="/channelId" error={props.error} hint="Events of one channel, or of every channel of the account.">
      {(a) => (
        <select {...a} value={props.value ?? ''} onChange={(e) => props.onChange(e.currentTarget.value || null)}>
          <option value="">All channels</option>
          {(channels.data?.results ?? []).map((c) => (
            <option value={c.id} key={c.id}>
              {c.name} ({c.deliveryType})
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
