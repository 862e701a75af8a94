import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { setupSender } from '../support/sending.js';

let dns: TestDns;
let t: TestDaemon;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'limits.pendingSendLimit': 3, 'policy.denyRecipients': ['blocked.example', 'ceo@example.net'] }));
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('account and recipient policy', () => {
  it('lets a pending account send its free quota of emails and then answers 403 send_limit_exceeded', async () => {
    const { key: token } = await newAccount(t, { state: 'pending' });
    const s = await setupSender(t, dns, { key: token });
    const send = (to: string[]) =>
      t.api('POST', '/send/transactional', {
        key: token,
        headers: { 'x-service-channel-id': s.channelId },
        body: { from: { email: `a@${s.domain}` }, to: to.map((email) => ({ email })), subject: 's', text: 't' },
      });
    expect((await send(['a@example.net', 'b@example.net'])).status).toBe(200);
    const over = await send(['c@example.net', 'd@example.net']);
    expect(over.status).toBe(403);
    expect(over.body.code).toBe('send_limit_exceeded');
    expect((await send(['c@example.net'])).status).toBe(200);
    expect((await send(['e@example.net'])).body.code).toBe('send_limit_exceeded');
  });

  it('refuses recipients on the operator deny list (domains cover subdomains) with 403 recipient_forbidden', async () => {
    const s = await setupSender(t, dns);
    for (const email of ['x@blocked.example', 'x@mail.blocked.example', 'CEO@example.net']) {
      const res = await t.api('POST', '/send/transactional', {
        headers: { 'x-service-channel-id': s.channelId },
        body: { from: { email: `a@${s.domain}` }, to: [{ email: 'fine@example.net' }, { email }], subject: 's', text: 't' },
      });
      expect(res.status, email).toBe(403);
      expect(res.body.code).toBe('recipient_forbidden');
    }
  });
});
