/**
 * Test fixtures for sending: a channel with a linked domain whose DNS records are published in
 * the in-process test DNS server and verified through the real API.
 */
import { expect } from 'vitest';
import type { TestDaemon } from './daemon.js';
import type { TestDns } from './dns-server.js';

export interface DnsRecordJson {
  type: 'txt' | 'cname' | 'mx';
  host: string;
  value: string;
  status: string;
}

export interface Sender {
  channelId: string;
  domainId: string;
  domain: string;
  dnsRecords: {
    domainKeyActive: DnsRecordJson;
    domainKeyPending: DnsRecordJson | null;
    /** An ed25519 key's RSA companion (dual signing). */
    domainKeyActiveCompanion?: DnsRecordJson;
    returnPath: DnsRecordJson[];
    tracking?: DnsRecordJson;
    unsubscribe?: DnsRecordJson;
  };
}

/** Publishes a record as the API describes it (mx values are "<priority> <host>"). */
export function publish(dns: TestDns, r: DnsRecordJson): void {
  if (r.type === 'mx') {
    const [priority, exchange] = r.value.split(/\s+/);
    dns.set(r.host, 'MX', [{ priority: Number(priority), exchange }]);
  } else {
    dns.set(r.host, r.type === 'txt' ? 'TXT' : 'CNAME', [r.value]);
  }
}

/** Publishes every record a domain needs for `verified`: its active key (and the key's RSA companion, if any) and the return path. */
export function publishAll(dns: TestDns, records: Pick<Sender['dnsRecords'], 'domainKeyActive' | 'domainKeyActiveCompanion' | 'returnPath'>): void {
  publish(dns, records.domainKeyActive);
  if (records.domainKeyActiveCompanion) publish(dns, records.domainKeyActiveCompanion);
  for (const r of records.returnPath) publish(dns, r);
}

export async function setupSender(
  t: Pick<TestDaemon, 'api'>,
  dns: TestDns,
  opts: { deliveryType?: 'live' | 'sandbox'; domain?: string; verify?: boolean; tracking?: { links: boolean; opens: boolean }; key?: string } = {},
): Promise<Sender> {
  const key = opts.key;
  const ch = await t.api('POST', '/channels', { key, body: { name: `ch-${Math.random().toString(36).slice(2, 8)}`, deliveryType: opts.deliveryType ?? 'live', tracking: opts.tracking } });
  expect(ch.status).toBe(200);
  const domain = opts.domain ?? `mail-${Math.random().toString(36).slice(2, 8)}.com`;
  const d = await t.api('POST', '/domains', { key, body: { name: domain, channelIds: [ch.body.id] } });
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  if (opts.verify ?? true) {
    publishAll(dns, d.body.dnsRecords);
    const v = await t.api('POST', `/domains/${d.body.id}/verify`, { key });
    expect(v.status, JSON.stringify(v.body)).toBe(200);
  }
  return { channelId: ch.body.id, domainId: d.body.id, domain, dnsRecords: d.body.dnsRecords };
}

/**
 * An inline template that renders past any small smtp.maxMessageSize after its 200 (80 × 80
 * lines of 100 characters: about 650 KB from under 2 KB of template and data): a composition
 * that fails in the finishing stage, not at intake.
 */
export const SQUARED_TEMPLATE = {
  subject: 'Report',
  html: '{{#each rows}}{{#each @root.rows}}<p>{{@root.filler}}</p>{{/each}}{{/each}}',
  data: { rows: Array.from({ length: 80 }, (_, i) => i), filler: 'x'.repeat(100) },
};

/** POST /send/transactional from app@ the sender's domain to `to`, with `body`'s fields; its message id (200 expected). */
export async function sendFrom(t: TestDaemon, s: Sender, to: string[], body: Record<string, unknown>): Promise<string> {
  const res = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `app@${s.domain}` }, to: to.map((email) => ({ email })), ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId;
}
