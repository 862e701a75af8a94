import { useState } from 'preact/hooks';
import type { ChannelOption } from '../components/channel-select';
import { Choice, ChoiceGroup } from '../components/choice-group';
import { Field } from '../components/field';
import { HeadersEditor } from '../components/headers-editor';
import { SubmitRow } from '../components/submit-row';
import { Link } from '../router';
import type { InboundRoute } from '../wire';

/** Every field POST /inbound/routes takes; PATCH takes them all but the address (the route's identity). */
export type RouteInput = Pick<InboundRoute, 'address' | 'channelId' | 'url' | 'enabled' | 'additionalHeaders'>;

export const NEW_ROUTE: RouteInput = { address: '', channelId: '', url: '', enabled: true, additionalHeaders: [] };

/**
 * A route's fields, the problem body's messages beside each. `create` shows the address field;
 * a route's page shows the address in its title instead. Without a channel chosen, the first.
 */
export function RouteForm(props: { initial: RouteInput; create: boolean; channels: ChannelOption[]; submitLabel: string; busy: boolean; error: unknown; onSubmit: (v: RouteInput) => void }) {
  const [v, setV] = useState(props.initial);
  const set = (patch: Partial<RouteInput>) => setV({ ...v, ...patch });
  const channelId = v.channelId || props.channels[0]?.id || '';
  // Only the fields the API takes: `initial` may be a whole route (id, key, dates…).
  const input = (): RouteInput => ({ address: v.address.trim(), channelId, url: v.url, enabled: v.enabled, additionalHeaders: v.additionalHeaders });
  return (
    <form
      class="settings-form"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit(input());
      }}
    >
      {props.create && <AddressField value={v.address} error={props.error} onInput={(address) => set({ address })} />}
      <Field label="Channel" pointer="/channelId" error={props.error} hint="The channel the received messages belong to (a channel key of it can read them).">
        {(a) => (
          <select {...a} required value={channelId} onChange={(e) => set({ channelId: e.currentTarget.value })}>
            {props.channels.map((c) => (
              <option value={c.id} key={c.id}>
                {c.name} ({c.deliveryType})
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Endpoint URL" pointer="/url" error={props.error} hint="Each message is POSTed here as signed JSON (https; http only where the server allows it).">
        {(a) => <input {...a} type="url" required autoComplete="off" value={v.url} onInput={(e) => set({ url: e.currentTarget.value })} />}
      </Field>
      <ChoiceGroup legend="State" pointers={['/enabled']} error={props.error}>
        <Choice type="checkbox" name="enabled" checked={v.enabled} onChange={(enabled) => set({ enabled })}>
          Enabled (mail to a disabled route is refused, 550 5.1.1)
        </Choice>
      </ChoiceGroup>
      <HeadersEditor value={v.additionalHeaders} error={props.error} onChange={(additionalHeaders) => set({ additionalHeaders })} />
      <SubmitRow label={props.submitLabel} busy={props.busy} />
    </form>
  );
}

function AddressField(props: { value: string; error: unknown; onInput: (v: string) => void }) {
  const hint = (
    <>
      <code>support@your-domain</code>, or <code>*@your-domain</code> for every address of the domain without a route of its own, on one of your verified{' '}
      <Link to="/domains">domains</Link>. Plus-addressing works: mail to <code>support+4711@…</code> comes to <code>support@…</code> with <code>mailboxHash</code> 4711.
    </>
  );
  return (
    <Field label="Address" pointer="/address" error={props.error} hint={hint}>
      {(a) => <input {...a} type="text" required autoComplete="off" spellcheck={false} value={props.value} onInput={(e) => props.onInput(e.currentTarget.value)} />}
    </Field>
  );
}
