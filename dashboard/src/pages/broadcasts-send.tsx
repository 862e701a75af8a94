import { useEffect, useState } from 'preact/hooks';
import { ApiError, request } from '../api';
import { ChannelSelect, type ChannelOption } from '../components/channel-select';
import { Field } from '../components/field';
import { ProblemBanner } from '../components/problem-banner';
import { useAction } from '../components/use-action';
import { navigate } from '../router';
import type { BroadcastAccepted } from '../wire';
import { addressesOf } from './suppressions-form';

/** Messages of a problem body under a pointer prefix ("/messages" → "/messages/3/to/0/email: ..."). */
function messagesUnder(error: unknown, prefix: string): string[] {
  if (!(error instanceof ApiError)) return [];
  const all = Object.entries(error.problem.errors ?? {}).filter(([p]) => p === prefix || p.startsWith(`${prefix}/`));
  return all.flatMap(([p, list]) => list.map((e) => (p === prefix ? e.message : `${p.slice(prefix.length + 1)}: ${e.message}`)));
}

interface Draft {
  channelId: string;
  from: string;
  subject: string;
  text: string;
  recipients: string;
}

/**
 * POST /send/broadcast with the simplest body: a from address, a subject and a text template
 * ({{name}}-style data is not offered here), one message per recipient. Opens the new
 * broadcast's page. Richer broadcasts (HTML, per-recipient data) go through the API.
 */
export function BroadcastSendForm(props: { channels: ChannelOption[]; channelId: string }) {
  const [d, setD] = useState<Draft>({ channelId: props.channelId, from: '', subject: '', text: '', recipients: '' });
  useEffect(() => setD((x) => ({ ...x, channelId: props.channelId })), [props.channelId]);
  const set = (patch: Partial<Draft>) => setD({ ...d, ...patch });
  const send = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { from: { email: d.from.trim() }, template: { subject: d.subject, text: d.text }, messages: addressesOf(d.recipients).map((email) => ({ to: [{ email }] })) };
    const r = await send.run(() => request<BroadcastAccepted>('POST', '/send/broadcast', { body, headers: { 'x-service-channel-id': d.channelId } }));
    if (r) navigate(`/broadcasts/${r.broadcastId}`);
  };
  const recipientErrors = messagesUnder(send.error, '/messages');
  return (
    <section class="card page-section" aria-labelledby="send-broadcast">
      <h2 id="send-broadcast">Send a broadcast</h2>
      <form class="settings-form" onSubmit={submit} noValidate>
        <ProblemBanner error={send.error} />
        <Field label="Channel" pointer="/channelId" error={send.error}>
          {(a) => <ChannelSelect {...a} channels={props.channels} value={d.channelId} onChange={(channelId) => set({ channelId })} />}
        </Field>
        <Field label="From address" pointer="/from/email" error={send.error} hint="An address at a domain linked to the channel.">
          {(a) => <input {...a} type="email" autoComplete="off" value={d.from} onInput={(e) => set({ from: e.currentTarget.value })} />}
        </Field>
        <Field label="Subject" pointer="/template/subject" error={send.error}>
          {(a) => <input {...a} type="text" value={d.subject} onInput={(e) => set({ subject: e.currentTarget.value })} />}
        </Field>
        <Field label="Text" pointer="/template/text" error={send.error} hint="Plain text; each recipient gets one message.">
          {(a) => <textarea {...a} rows={4} value={d.text} onInput={(e) => set({ text: e.currentTarget.value })} />}
        </Field>
        <Field label="Recipients" error={send.error} hint="One address per line (or separated by commas).">
          {(a) => (
            <textarea
              {...a}
              rows={4}
              aria-invalid={recipientErrors.length ? true : undefined}
              aria-describedby={[a['aria-describedby'], recipientErrors.length ? 'recipients-error' : ''].filter(Boolean).join(' ')}
              value={d.recipients}
              onInput={(e) => set({ recipients: e.currentTarget.value })}
            />
          )}
        </Field>
        {recipientErrors.length > 0 && (
          <small class="field-error" id="recipients-error">
            {recipientErrors.join('; ')}
          </small>
        )}
        <div class="actions">
          <button type="submit" class="button button-primary" disabled={send.busy}>
            {send.busy ? 'Sending…' : 'Send broadcast'}
          </button>
        </div>
      </form>
    </section>
  );
}
