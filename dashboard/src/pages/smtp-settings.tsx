import { useState } from 'preact/hooks';
import { api } from '../api';
import type { ChannelOption } from '../components/channel-select';
import { CopyButton } from '../components/copy-button';
import { ProblemBanner } from '../components/problem-banner';
import { useApi } from '../use-api';
import type { DashboardSettings } from '../wire';

/**
 * The SMTP submission settings to copy into an application (docs/smtp-submission.md), from GET
 * /dashboard/settings: host, STARTTLS port, implicit-TLS port, and the user name: a channel's id
 * with an account key (chosen here), `api` with a channel key; the password is the key.
 */
export function SmtpSettings(props: { channels: ChannelOption[] }) {
  const settings = useApi(() => api.get<DashboardSettings>('/dashboard/settings'), []);
  const smtp = settings.data?.smtp;
  return (
    <section class="card page-section" aria-labelledby="smtp-settings">
      <h2 id="smtp-settings">SMTP settings</h2>
      <ProblemBanner error={settings.error} />
      {!smtp && !settings.error && <p class="muted">Loading…</p>}
      {smtp && !smtp.enabled && (
        <p>
          SMTP submission is off (<code>smtp.enabled</code> is <code>false</code> in the configuration): send with the HTTP API, or turn it on and restart.
        </p>
      )}
      {smtp?.enabled && <SmtpFacts smtp={smtp} channels={props.channels} />}
    </section>
  );
}

function Copyable(props: { value: string; label: string }) {
  return (
    <dd>
      <code class="code-box">{props.value}</code>
      <CopyButton text={props.value} label={`Copy ${props.label}`} />
    </dd>
  );
}

function SmtpFacts(props: { smtp: DashboardSettings['smtp']; channels: ChannelOption[] }) {
  const { smtp } = props;
  const [channelId, setChannelId] = useState('');
  const chosen = channelId || props.channels[0]?.id || '';
  return (
    <>
      <dl class="dns-fields smtp-fields">
        <dt>Host</dt>
        <Copyable value={smtp.host} label="host" />
        <dt>Port (STARTTLS)</dt>
        <Copyable value={String(smtp.port)} label="port" />
        <dt>Implicit TLS port</dt>
        {smtp.implicitTlsPort > 0 ? <Copyable value={String(smtp.implicitTlsPort)} label="implicit TLS port" /> : <dd class="muted">off (smtp.implicitTlsPort)</dd>}
        <dt>User name, channel key</dt>
        <Copyable value="api" label="user name api" />
        <dt>User name, account key</dt>
        <dd class="smtp-user">
          {props.channels.length === 0 ? (
            <span class="muted">the id of the channel to send through (create a channel first)</span>
          ) : (
            <ChannelIdPicker channels={props.channels} value={chosen} onChange={setChannelId} />
          )}
        </dd>
        <dt>Password</dt>
        <dd>the API key itself: its secret, shown once when the key is created</dd>
      </dl>
      {smtp.localOnly && (
        <p class="muted">
          The listener is bound to <code>{smtp.host}</code>: only programs on the daemon's machine can connect. Set <code>smtp.host</code> (e.g. <code>0.0.0.0</code>) to accept others.
        </p>
      )}
      {smtp.selfSignedCertificate && (
        <p class="muted">
          The TLS certificate is self-signed (no <code>smtp.tlsCert</code>): clients refuse it unless told to accept it. Set <code>smtp.tlsCert</code> and <code>smtp.tlsKey</code> to a real certificate for <code>{smtp.host}</code>.
        </p>
      )}
    </>
  );
}

function ChannelIdPicker(props: { channels: ChannelOption[]; value: string; onChange: (id: string) => void }) {
  return (
    <>
      <label class="visually-hidden" for="smtp-channel">
        Channel to send through
      </label>
      <select id="smtp-channel" value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {props.channels.map((c) => (
          <option value={c.id} key={c.id}>
            {c.name} ({c.deliveryType})
          </option>
        ))}
      </select>
      <code class="code-box" data-testid="smtp-user">
        {props.value}
      </code>
      <CopyButton text={props.value} label="Copy user name" />
    </>
  );
}
