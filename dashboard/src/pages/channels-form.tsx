import { useState } from 'preact/hooks';
import { Choice, ChoiceGroup } from '../components/choice-group';
import { Field } from '../components/field';
import { SubmitRow } from '../components/submit-row';
import type { ChannelDetail, DeliveryType } from '../wire';

/** Every field POST and PATCH /channels accept (src/http/routes/channels.ts), as the answer has them. */
export type ChannelInput = Pick<ChannelDetail, 'name' | 'deliveryType' | 'tracking'>;

export const NEW_CHANNEL: ChannelInput = { name: '', deliveryType: 'sandbox', tracking: { links: false, opens: false } };

/** What each delivery type does, said wherever a channel's type is chosen or shown. */
export const DELIVERY_HELP: Record<DeliveryType, string> = {
  sandbox: 'Sandbox: nothing leaves the server; messages land in the Sandbox inbox with simulated delivery events.',
  live: 'Live: messages are delivered to the recipients’ mail servers.',
};

/** The channel's fields; the problem body's messages show beside each (422 validation_failed). */
export function ChannelForm(props: { initial: ChannelInput; submitLabel: string; busy: boolean; error: unknown; onSubmit: (v: ChannelInput) => void }) {
  const [v, setV] = useState(props.initial);
  const tracking = (patch: Partial<ChannelInput['tracking']>) => setV({ ...v, tracking: { ...v.tracking, ...patch } });
  return (
    <form
      class="settings-form"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit({ name: v.name, deliveryType: v.deliveryType, tracking: v.tracking });
      }}
    >
      <Field label="Name" pointer="/name" error={props.error} hint="Up to 100 characters, shown in lists and statistics.">
        {(a) => <input {...a} type="text" required value={v.name} onInput={(e) => setV({ ...v, name: e.currentTarget.value })} />}
      </Field>
      <ChoiceGroup legend="Delivery" pointers={['/deliveryType']} error={props.error}>
        {(['sandbox', 'live'] as const).map((t) => (
          <Choice key={t} type="radio" name="deliveryType" value={t} checked={v.deliveryType === t} onChange={() => setV({ ...v, deliveryType: t })}>
            {DELIVERY_HELP[t]}
          </Choice>
        ))}
      </ChoiceGroup>
      <ChoiceGroup legend="Tracking" pointers={['/tracking', '/tracking/links', '/tracking/opens']} error={props.error}>
        <Choice type="checkbox" name="links" checked={v.tracking.links} onChange={(c) => tracking({ links: c })}>
          Track link clicks (links are rewritten through this server)
        </Choice>
        <Choice type="checkbox" name="opens" checked={v.tracking.opens} onChange={(c) => tracking({ opens: c })}>
          Track opens (a 1-pixel image in HTML mail)
        </Choice>
      </ChoiceGroup>
      <SubmitRow label={props.submitLabel} busy={props.busy} />
    </form>
  );
}
