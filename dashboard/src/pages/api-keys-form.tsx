import { useState } from 'preact/hooks';
import { api } from '../api';
import type { ChannelOption } from '../components/channel-select';
import { CopyButton } from '../components/copy-button';
import { Field } from '../components/field';
import { ProblemBanner } from '../components/problem-banner';
import { useAction } from '../components/use-action';
import type { CreatedApiKey } from '../wire';

/**
 * POST /api-keys {name?, channelId?}: the form, then the new key's secret, shown this once with
 * its Copy button and what to do with it (the API's bearer token, the SMTP password).
 */
export function CreateKey(props: { channels: ChannelOption[]; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [channelId, setChannelId] = useState('');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const create = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const made = await create.run(() => api.post<CreatedApiKey>('/api-keys', { name: name.trim() || undefined, channelId: channelId || undefined }));
    if (!made) return;
    setCreated(made);
    setName('');
    props.onCreated();
  };
  return (
    <section class="card page-section" aria-labelledby="new-key">
      <h2 id="new-key">Create a key</h2>
      {created && <NewKey apiKey={created} channels={props.channels} onDismiss={() => setCreated(null)} />}
      <ProblemBanner error={create.error} />
      <form class="settings-form" onSubmit={submit}>
        <Field label="Name (optional)" pointer="/name" error={create.error} hint="What uses it, e.g. “shop backend”.">
          {(a) => <input {...a} name="name" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field label="Acts on" pointer="/channelId" error={create.error} hint="A channel key can only send through its channel and read its data.">
          {(a) => (
            <select {...a} name="channelId" value={channelId} onChange={(e) => setChannelId(e.currentTarget.value)}>
              <option value="">The whole account (every channel)</option>
              {props.channels.map((c) => (
                <option value={c.id} key={c.id}>
                  Channel {c.name} ({c.deliveryType})
                </option>
              ))}
            </select>
          )}
        </Field>
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={create.busy}>
            {create.busy ? 'Creating…' : 'Create key'}
          </button>
        </div>
      </form>
    </section>
  );
}

function NewKey(props: { apiKey: CreatedApiKey; channels: ChannelOption[]; onDismiss: () => void }) {
  const k = props.apiKey;
  const channel = props.channels.find((c) => c.id === k.channelId);
  return (
    <div class="banner banner-ok new-key" role="status">
      <p>
        <strong>New key {k.name ? `“${k.name}”` : ''} created.</strong> Copy it now: it is not shown again (only its first characters are kept in the list).
      </p>
      <div class="key-line">
        <code class="code-box" data-testid="new-api-key">
          {k.key}
        </code>{' '}
        <CopyButton text={k.key} label="Copy key" />
      </div>
      <p>
        Use it as <code>Authorization: Bearer …</code> on the API, and as the SMTP password with the user name{' '}
        {k.channelId ? (
          <>
            <code>api</code> (it is the key of channel {channel?.name ?? k.channelId}).
          </>
        ) : (
          <>of the channel to send through: its id (see SMTP settings below).</>
        )}
      </p>
      <button type="button" class="button button-small" onClick={props.onDismiss}>
        I have copied it
      </button>
    </div>
  );
}
