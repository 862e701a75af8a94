import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ChannelSelect, type ChannelOption } from '../components/channel-select';
import { Field } from '../components/field';
import { ProblemBanner } from '../components/problem-banner';
import { useAction } from '../components/use-action';
import type { MailType, SuppressionChanges } from '../wire';
import { MailTypeSelect } from './suppressions-filters';

/** Addresses typed one per line, or separated by commas or spaces. */
export function addressesOf(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * POST /suppressions: addresses (up to 500) for a channel and mail type, suppressed by hand
 * (reason "manual"). Each address gets its own outcome: an invalid one is reported, not refused.
 */
export function SuppressionAddForm(props: { channels: ChannelOption[]; channelId: string; mailType: MailType; onAdded: () => void }) {
  const [channelId, setChannelId] = useState(props.channelId);
  const [mailType, setMailType] = useState<MailType>(props.mailType);
  const [text, setText] = useState('');
  const [results, setResults] = useState<SuppressionChanges['results'] | null>(null);
  const add = useAction();
  useEffect(() => (setChannelId(props.channelId), setMailType(props.mailType)), [props.channelId, props.mailType]);
  const submit = async (e: Event) => {
    e.preventDefault();
    setResults(null);
    const r = await add.run(() => api.post<SuppressionChanges>('/suppressions', { channelId, mailType, emails: addressesOf(text) }));
    if (!r) return;
    setResults(r.results);
    if (r.results.every((x) => x.success)) setText('');
    props.onAdded();
  };
  return (
    <form class="settings-form" onSubmit={submit} noValidate>
      <ProblemBanner error={add.error} />
      <Field label="Channel" pointer="/channelId" error={add.error}>
        {(a) => <ChannelSelect {...a} channels={props.channels} value={channelId} onChange={setChannelId} />}
      </Field>
      <Field label="Mail type" pointer="/mailType" error={add.error} hint="Suppressions of broadcasts and of transactional mail are kept apart.">
        {(a) => <MailTypeSelect {...a} value={mailType} onChange={setMailType} />}
      </Field>
      <Field label="Addresses" pointer="/emails" error={add.error} hint="One per line (or separated by commas), up to 500.">
        {(a) => <textarea {...a} rows={4} value={text} onInput={(e) => setText(e.currentTarget.value)} />}
      </Field>
      <div class="actions">
        <button type="submit" class="button button-primary" disabled={add.busy}>
          {add.busy ? 'Adding…' : 'Add suppressions'}
        </button>
      </div>
      {results && (
        <div role="status" aria-label="Outcome per address">
          <ul class="change-results">
            {results.map((r) => (
              <li key={r.email} class={r.success ? undefined : 'field-error'}>
                <code>{r.email}</code>: {r.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </form>
  );
}
