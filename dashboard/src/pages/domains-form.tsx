import { useState } from 'preact/hooks';
import { useChannelOptions } from '../components/channel-select';
import { Choice, ChoiceGroup } from '../components/choice-group';
import { Field } from '../components/field';
import { StatusBadge } from '../components/status-badge';

/** The channel checkboxes of a domain (POST /domains channelIds, PATCH /domains/{id}), or of a template (`legend`, `hint`). */
export function ChannelPicker(props: { value: string[]; onChange: (ids: string[]) => void; error: unknown; legend?: string; hint?: string }) {
  const channels = useChannelOptions();
  const rows = channels.data?.results ?? [];
  const toggle = (id: string, on: boolean) => props.onChange(on ? [...props.value, id] : props.value.filter((x) => x !== id));
  return (
    <ChoiceGroup
      legend={props.legend ?? 'Channels that send from this domain'}
      pointers={['/channelIds']}
      error={props.error}
      hint={channels.data && rows.length === 0 ? 'No channels yet: create one on the Channels page, then link it here.' : props.hint}
    >
      {rows.map((c) => (
        <Choice key={c.id} type="checkbox" name="channelIds" value={c.id} checked={props.value.includes(c.id)} onChange={(on) => toggle(c.id, on)}>
          {c.name} <StatusBadge status={c.deliveryType} />
        </Choice>
      ))}
    </ChoiceGroup>
  );
}

export interface NewDomain {
  name: string;
  dkimAlgorithm: 'rsa' | 'ed25519';
  channelIds: string[];
}

/** Name, DKIM algorithm and channels of a new domain (POST /domains). */
export function DomainCreateForm(props: { busy: boolean; error: unknown; onSubmit: (v: NewDomain) => void }) {
  const [v, setV] = useState<NewDomain>({ name: '', dkimAlgorithm: 'rsa', channelIds: [] });
  return (
    <form
      class="settings-form"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit(v);
      }}
    >
      <FieldName value={v.name} error={props.error} onInput={(name) => setV({ ...v, name })} />
      <ChoiceGroup legend="DKIM key" pointers={['/dkimAlgorithm']} error={props.error}>
        <Choice type="radio" name="dkimAlgorithm" value="rsa" checked={v.dkimAlgorithm === 'rsa'} onChange={() => setV({ ...v, dkimAlgorithm: 'rsa' })}>
          RSA-2048 (every receiver checks it)
        </Choice>
        <Choice type="radio" name="dkimAlgorithm" value="ed25519" checked={v.dkimAlgorithm === 'ed25519'} onChange={() => setV({ ...v, dkimAlgorithm: 'ed25519' })}>
          ed25519, signed with an RSA companion too (two records to publish)
        </Choice>
      </ChoiceGroup>
      <ChannelPicker value={v.channelIds} error={props.error} onChange={(channelIds) => setV({ ...v, channelIds })} />
      <div class="actions">
        <button type="submit" class="button button-primary" disabled={props.busy}>
          {props.busy ? 'Adding…' : 'Add domain'}
        </button>
      </div>
    </form>
  );
}

function FieldName(props: { value: string; error: unknown; onInput: (v: string) => void }) {
  return (
    <Field label="Domain name" pointer="/name" error={props.error} hint="The domain of your From addresses, e.g. mail.yourcompany.com.">
      {(a) => <input {...a} type="text" required autoComplete="off" spellcheck={false} value={props.value} onInput={(e) => props.onInput(e.currentTarget.value)} />}
    </Field>
  );
}
