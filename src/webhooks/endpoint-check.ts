/**
 * The checks made in code of an endpoint postrider POSTs to: a webhook's, and an inbound route's
 * (issue 33), which follow the same rules and answer the same field errors: the URL's target
 * (scheme, a host that resolves to public addresses: targets.ts) and the additional headers
 * (no reserved name, no name twice).
 */
import type { FieldErrorList } from '../domain/errors.js';
import { isReservedHeader, type WebhookHeader } from '../domain/webhook.js';
import type { WebhookTargets } from './targets.js';

export async function checkEndpoint(targets: WebhookTargets, input: { url?: string; additionalHeaders?: readonly WebhookHeader[] }, errors: FieldErrorList): Promise<void> {
  if (input.url !== undefined) {
    const problem = await targets.checkUrl(input.url);
    if (problem) errors.add('/url', problem.code, problem.message);
  }
  const seen = new Set<string>();
  (input.additionalHeaders ?? []).forEach((h, i) => {
    const lower = h.name.toLowerCase();
    if (isReservedHeader(lower)) errors.add(`/additionalHeaders/${i}/name`, 'reserved_header', `${h.name} is set by postrider and cannot be replaced`);
    else if (seen.has(lower)) errors.add(`/additionalHeaders/${i}/name`, 'duplicate_items', `${h.name} is given twice`);
    seen.add(lower);
  });
}
