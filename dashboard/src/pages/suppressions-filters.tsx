import { useEffect, useState } from 'preact/hooks';
import { ChannelSelect, type ChannelOption } from '../components/channel-select';
import { Field } from '../components/field';
import type { MailType, SuppressionReason } from '../wire';

export const REASONS = ['bounce', 'complaint', 'unsubscribe', 'manual'] as const satisfies readonly SuppressionReason[];

/** What GET /suppressions filters on: channel and mail type (required), reason, part of the address. */
export interface SuppressionFilter {
  channelId: string;
  mailType: MailType;
  reason: string;
  email: string;
}

/** The list's filters, applied on submit. */
export function SuppressionFilters(props: { value: SuppressionFilter; channels: ChannelOption[]; onChange: (f: SuppressionFilter) => void }) {
  const [draft, setDraft] = useState(props.value);
  useEffect(() => setDraft(props.value), [props.value]);
  const set = (patch: Partial<SuppressionFilter>) => setDraft({ ...draft, ...patch });
  return (
    <form
      class="filters"
      aria-label="Suppression filters"
      onSubmit={(e) => {
        e.preventDefault();
        props.onChange(draft);
      }}
    >
      <Field label="Channel">{(a) => <ChannelSelect {...a} channels={props.channels} value={draft.channelId} onChange={(channelId) => set({ channelId })} />}</Field>
      <Field label="Mail type">{(a) => <MailTypeSelect {...a} value={draft.mailType} onChange={(mailType) => set({ mailType })} />}</Field>
      <Field label="Reason">
        {(a) => (
          <select {...a} value={draft.reason} onChange={(e) => set({ reason: e.currentTarget.value })}>
            <option value="">Any reason</option>
            {REASONS.map((r) => (
              <option value={r} key={r}>
                {r}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Address contains">{(a) => <input {...a} type="search" value={draft.email} onInput={(e) => set({ email: e.currentTarget.value })} />}</Field>
      <button type="submit" class="button button-primary">
        Apply
      </button>
    </form>
  );
}

export function MailTypeSelect(props: { id: string; value: MailType; onChange: (m: MailType) => void; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) {
  return (
    <select id={props.id} aria-describedby={props['aria-describedby']} aria-invalid={props['aria-invalid']} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as MailType)}>
      <option value="transactional">Transactional</option>
      <option value="broadcast">Broadcast</option>
    </select>
  );
}
