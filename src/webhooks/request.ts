/**
 * One signed webhook request, as the receiver sees it: the target resolved and checked
 * (WebhookTargets: SSRF rules, pinned addresses), the user's additional headers under ours, the
 * delivery id and attempt, the signature (signature.ts) over the exact bytes sent. The
 * dispatcher sends outbox entries through it and POST /webhooks/{id}/test its test event, so a
 * test is signed and checked exactly like a real delivery.
 */
import type { Webhook } from '../domain/webhook.js';
import type { PostFn, PostResult } from './http-post.js';
import type { PinnedAgents } from './pinned-agent.js';
import { signatureHeader, signatureHeaderOf } from './signature.js';
import type { WebhookTargets } from './targets.js';

const USER_AGENT = 'postrider-webhooks/1';

/** Bytes of a response body a request reads at most, unless told otherwise (the dispatcher's default, a test's). */
export const RESPONSE_BYTES = 4096;

/** Set on test requests only (POST /webhooks/{id}/test), so a receiver can tell them apart. */
export const TEST_HEADER = 'x-service-webhook-test';

export type SignedDelivery = DeliveryHeaders & (
  /** The JSON body as a value, serialized here. */
  | { payload: unknown; body?: undefined }
  /**
   * The JSON body serialized already, in UTF-8 bytes, sent and signed as they are: an inbound
   * message's JSON is built off the main thread (inbound/post-attempt.ts), up to tens of MB.
   */
  | { body: Uint8Array; payload?: undefined }
);

interface DeliveryHeaders {
  webhook: Pick<Webhook, 'url' | 'additionalHeaders'>;
  /** The webhook's signing key. */
  secret: string;
  /** X-Service-Webhook-Id: the same on every retry of one delivery. */
  deliveryId: string;
  /** X-Service-Webhook-Attempt, from 1. */
  attempt: number;
  test?: boolean;
}

export interface SendOptions {
  targets: WebhookTargets;
  post: PostFn;
  timeoutMs: number;
  maxResponseBytes: number;
  /** The signature's timestamp. */
  nowMs: number;
  agents?: PinnedAgents;
  signal?: AbortSignal;
}

export async function sendSigned(d: SignedDelivery, o: SendOptions): Promise<PostResult> {
  const url = new URL(d.webhook.url);
  const target = await o.targets.resolve(url.hostname);
  if (!target.ok) return { statusCode: null, error: target.error };
  const body = d.body ?? JSON.stringify(d.payload);
  const signature = typeof body === 'string' ? signatureHeader(d.secret, body, o.nowMs / 1000) : await signatureHeaderOf(d.secret, body, o.nowMs / 1000);
  const headers: Record<string, string> = {};
  for (const h of d.webhook.additionalHeaders) headers[h.name] = h.value;
  Object.assign(headers, {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-service-webhook-id': d.deliveryId,
    'x-service-webhook-attempt': String(d.attempt),
    'x-service-webhook-signature': signature,
    ...(d.test ? { [TEST_HEADER]: 'true' } : {}),
  });
  return o.post({
    url: d.webhook.url,
    addresses: target.addresses,
    headers,
    body,
    timeoutMs: o.timeoutMs,
    maxResponseBytes: o.maxResponseBytes,
    agents: o.agents,
    signal: o.signal,
  });
}
