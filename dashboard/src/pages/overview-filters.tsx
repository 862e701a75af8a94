import { useState } from 'preact/hooks';
import type { MailTypeChoice } from '../stats';

export interface OverviewFilter {
  channelId: string;
  mailType: MailTypeChoice;
  /** YYYY-MM-DD, UTC days. */
  from: string;
  to: string;
}

/** The channel, mail type and date range of the overview; applied on submit. */
export function OverviewFilters(props: { value: OverviewFilter; channels: { id: string; name: string }[]; onChange: (f: OverviewFilter) => void }) {
  const [draft, setDraft] = useState(props.value);
  const set = (patch: Partial<OverviewFilter>) => setDraft({ ...draft, ...patch });
  return (
    <form
      class="filters"
      aria-label="Statistics filters"
      onSubmit={(e) => {
        e.preventDefault();
        props.onChange(draft);
      }}
    >
      <div class="field">
        <label for="ov-channel">Channel</label>
        <select id="ov-channel" value={draft.channelId} onChange={(e) => set({ channelId: e.currentTarget.value })}>
          <option value="">All channels</option>
          {props.channels.map((c) => (
            <option value={c.id} key={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="ov-type">Mail type</label>
        <select id="ov-type" value={draft.mailType} onChange={(e) => set({ mailType: e.currentTarget.value as MailTypeChoice })}>
          <option value="all">All</option>
          <option value="transactional">Transactional</option>
          <option value="broadcast">Broadcast</option>
        </select>
      </div>
      <div class="field">
        <label for="ov-from">From</label>
        <input id="ov-from" type="date" required value={draft.from} max={draft.to} onInput={(e) => set({ from: e.currentTarget.value })} />
      </div>
      <div class="field">
        <label for="ov-to">To</label>
        <input id="ov-to" type="date" required value={draft.to} min={draft.from} onInput={(e) => set({ to: e.currentTarget.value })} />
      </div>
      <button type="submit" class="button button-primary">
        Apply
      </button>
    </form>
  );
}
