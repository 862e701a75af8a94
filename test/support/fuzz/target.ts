/**
 * The daemon the fuzzers aim at: a child `postrider serve` with fixtures to reach the deep
 * paths, the way back to those fixtures after fuzzed PATCHes, and its error log lines.
 */
import { ChildDaemon } from '../child-daemon.js';
import { runCli } from '../cli.js';
import type { FuzzContext } from './common.js';

/**
 * Starts a daemon for fuzzing (SMTP on, delivery off, limits that fuzzing would trip raised)
 * with a sandbox channel, a linked domain, a channel key, a webhook, a sent message and a
 * second account whose channel serves as the foreign resource.
 */
export async function startFuzzTarget(dnsAddress: string, env: Record<string, string> = {}): Promise<FuzzContext> {
  const d = new ChildDaemon({
    env: {
      POSTRIDER_SMTP_ENABLED: 'true',
      POSTRIDER_DNS_SERVERS: dnsAddress,
      POSTRIDER_API_RATE_LIMIT: '1000000',
      POSTRIDER_SMTP_AUTH_FAILURE_LIMIT: '10000',
      POSTRIDER_SMTP_AUTH_FAILURES_PER_ADDRESS: '1000000',
      POSTRIDER_WEBHOOKS_ALLOW_HTTP: 'true',
      POSTRIDER_WEBHOOKS_ALLOW_PRIVATE: 'true',
      POSTRIDER_WORKERS_THREADS: '1',
      ...env,
    },
  });
  await d.start();
  const cli = async (args: string[]) => {
    const r = await runCli([...args, '--json'], { POSTRIDER_DATA_DIR: d.dataDir });
    if (r.code !== 0) throw new Error(`postrider ${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  const accountKey = d.apiKey;
  const channel = await d.api('POST', '/channels', { body: { name: 'fuzz', deliveryType: 'sandbox' } });
  const domain = `fuzz-${Math.random().toString(36).slice(2, 8)}.com`;
  const dom = await d.api('POST', '/domains', { body: { name: domain, channelIds: [channel.body.id] } });
  const [account] = await cli(['accounts', 'list']);
  const channelKey = (await cli(['keys', 'create', '--account', account.id, '--channel', channel.body.id])).token;
  const other = await cli(['accounts', 'create', '--name', 'foreign', '--state', 'active']);
  const foreignKey = (await cli(['keys', 'create', '--account', other.id])).token;
  const foreignChannel = await d.api('POST', '/channels', { key: foreignKey, body: { name: 'theirs' } });
  const hook = await d.api('POST', '/webhooks', { body: { url: 'http://127.0.0.1:9/hook', events: ['complained'], channelId: channel.body.id } });
  const sent = await d.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': channel.body.id },
    body: { from: { email: `app@${domain}` }, to: [{ email: 'ann@example.net' }], subject: 's', text: 't' },
  });
  for (const [what, r] of Object.entries({ channel, dom, foreignChannel, hook, sent })) {
    if (r.status !== 200) throw new Error(`fuzz target setup: ${what} answered ${r.status} ${JSON.stringify(r.body)}`);
  }
  return {
    d,
    accountKey,
    channelKey,
    foreignKey,
    channelId: channel.body.id,
    foreignChannelId: foreignChannel.body.id,
    domain,
    domainId: dom.body.id,
    messageId: sent.body.messageId,
    webhookId: hook.body.id,
  };
}

/**
 * Puts the fixtures back the way startFuzzTarget made them: fuzzed PATCH requests on the real
 * ids may have turned the channel live or unlinked the domain, after which every send would be
 * refused and the deep paths (render, sign, store) no longer reached.
 */
export async function restoreFixtures(c: FuzzContext): Promise<void> {
  const channel = await c.d.api('PATCH', `/channels/${c.channelId}`, { body: { name: 'fuzz', deliveryType: 'sandbox' } });
  const domain = await c.d.api('PATCH', `/domains/${c.domainId}`, { body: { channelIds: [c.channelId] } });
  if (channel.status !== 200 || domain.status !== 200) throw new Error(`could not restore the fuzz fixtures: ${channel.status} ${domain.status}`);
}

/** Log lines at level error (50) or above: an unexpected fault the fuzzing caused. */
export function errorLogLines(log: string): string[] {
  return log.split('\n').filter((l) => /"level":(5\d|60)/.test(l));
}
