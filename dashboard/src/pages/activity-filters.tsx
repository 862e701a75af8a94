import { useEffect, useState } from 'preact/hooks';
import { Field } from '../components/field';
import { EMPTY_FILTER, type ActivityFilter } from './activity-filter';
import type { ChannelOption } from '../components/channel-select';
import type { EventType } from '../wire';
import { EVENT_TYPES } from './message-types';

type Set = (patch: Partial<ActivityFilter>) => void;

/** Every filter of GET /activity/events; applied on submit (the page puts them in its URL). */
export function ActivityFilters(props: { value: ActivityFilter; channels: ChannelOption[]; error: unknown; onApply: (f: ActivityFilter) => void }) {
  const [draft, setDraft] = useState(props.value);
  useEffect(() => setDraft(props.value), [props.value]);
  const set: Set = (patch) => setDraft((d) => ({ ...d, ...patch }));
  return (
    <form
      class="filters activity-filters"
      aria-label="Activity filters"
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply(draft);
      }}
    >
      <ChannelAndType draft={draft} set={set} channels={props.channels} error={props.error} />
      <TextFilters draft={draft} set={set} error={props.error} />
      <EventTypeChoices value={draft.eventTypes} onChange={(eventTypes) => set({ eventTypes })} />
      <div class="actions">
        <button type="submit" class="button button-primary">
          Apply filters
        </button>
        <button type="button" class="button" onClick={() => props.onApply({ ...EMPTY_FILTER, limit: draft.limit })}>
          Clear
        </button>
      </div>
    </form>
  );
}

function ChannelAndType(props: { draft: ActivityFilter; set: Set; channels: ChannelOption[]; error: unknown }) {
  const { draft, set } = props;
  return (
    <>
      <Field label="Channel" pointer="/channelId" error={props.error}>
        {(a) => (
          <select {...a} value={draft.channelId} onChange={(e) => set({ channelId: e.currentTarget.value })}>
            <option value="">All channels</option>
            {props.channels.map((c) => (
              <option value={c.id} key={c.id}>
                {c.name}
                {c.deliveryType === 'sandbox' ? ' (sandbox)' : ''}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Mail type" pointer="/mailType" error={props.error}>
        {(a) => (
          <select {...a} value={draft.mailType} onChange={(e) => set({ mailType: e.currentTarget.value as ActivityFilter['mailType'] })}>
            <option value="">All</option>
            <option value="transactional">Transactional</option>
            <option value="broadcast">Broadcast</option>
          </select>
        )}
      </Field>
      <Field label="From (UTC day)" pointer="/startDate" error={props.error}>
        {(a) => <input {...a} type="date" value={draft.from} max={draft.to || undefined} onInput={(e) => set({ from: e.currentTarget.value })} />}
      </Field>
      <Field label="To (UTC day)" pointer="/endDate" error={props.error}>
        {(a) => <input {...a} type="date" value={draft.to} min={draft.from || undefined} onInput={(e) => set({ to: e.currentTarget.value })} />}
      </Field>
    </>
  );
}

function TextFilters(props: { draft: ActivityFilter; set: Set; error: unknown }) {
  const { draft, set } = props;
  const text = (label: string, key: 'recipient' | 'subject' | 'tags' | 'messageId', hint?: string) => (
    <Field label={label} pointer={`/${key}`} error={props.error} hint={hint}>
      {(a) => <input {...a} type="text" value={draft[key]} onInput={(e) => set({ [key]: e.currentTarget.value })} />}
    </Field>
  );
  return (
    <>
      {text('Recipient', 'recipient')}
      {text('Subject', 'subject', 'Contains, any case')}
      {text('Tags', 'tags', 'Comma separated; all must match')}
      {text('Message id', 'messageId')}
      <Field label="Per page" pointer="/limit" error={props.error}>
        {(a) => <input {...a} type="number" min={1} max={500} value={draft.limit} onInput={(e) => set({ limit: Number(e.currentTarget.value) || 1 })} />}
      </Field>
    </>
  );
}

function EventTypeChoices(props: { value: EventType[]; onChange: (v: EventType[]) => void }) {
  const toggle = (t: EventType, on: boolean) => props.onChange(on ? [...props.value, t] : props.value.filter((x) => x !== t));
  return (
    <fieldset class="event-types">
      <legend>Event types (none checked: all)</legend>
      {EVENT_TYPES.map((t) => (
        <label key={t}>
          <input type="checkbox" checked={props.value.includes(t)} onChange={(e) => toggle(t, e.currentTarget.checked)} /> {t}
        </label>
      ))}
    </fieldset>
  );
}
