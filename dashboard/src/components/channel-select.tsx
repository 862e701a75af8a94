import type { ComponentChildren } from 'preact';
import { api } from '../api';
import { Link } from '../router';
import { useApi } from '../use-api';
import type { ChannelSummary, Page } from '../wire';

/** What a channel choice needs of a channel. */
export type ChannelOption = Pick<ChannelSummary, 'id' | 'name' | 'deliveryType'>;

/** The account's channels (GET /channels, up to 500) for pages whose API calls name one. */
export function useChannelOptions() {
  return useApi(() => api.get<Page<ChannelOption>>('/channels', { limit: 500 }), []);
}

/** A <select> of channels for a Field (label and error come from the Field). */
export function ChannelSelect(props: {
  channels: ChannelOption[];
  value: string;
  onChange: (id: string) => void;
  id: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
}) {
  return (
    <select id={props.id} aria-describedby={props['aria-describedby']} aria-invalid={props['aria-invalid']} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
      {props.channels.map((c) => (
        <option value={c.id} key={c.id}>
          {c.name} ({c.deliveryType})
        </option>
      ))}
    </select>
  );
}

/**
 * The empty state of a page that works on a channel while the account has none (of the kind it
 * needs): why a channel comes first, and the way to the Channels page.
 */
export function NoChannelYet(props: { title?: string; why: ComponentChildren; then: ComponentChildren }) {
  return (
    <div class="empty-state">
      <h2>{props.title ?? 'No channels yet'}</h2>
      <p>
        {props.why} <Link to="/channels">Create a channel</Link> {props.then}
      </p>
    </div>
  );
}
