/**
 * A sandbox message's simulated outcome (domain/sandbox-outcome.ts) written inside a write: its
 * events, and a suppression per simulated bounce (a hard bounce suppresses, as live). In the
 * commit of one sent now (messages.ts), or when one composed or signed after it is finished
 * (signing.ts).
 */
import type { EventRecord, MessageRecord } from '../../domain/types.js';
import type { Store } from './env.js';
import { appendEventInTxn } from './events.js';
import { addSuppressionInTxn } from './suppressions.js';

export function recordSimulationInTxn(store: Store, r: Pick<MessageRecord, 'channelId' | 'mailType'>, events: readonly Omit<EventRecord, 'seq'>[], suppress: readonly string[]): void {
  for (const e of events) appendEventInTxn(store, e);
  for (const rcpt of suppress) addSuppressionInTxn(store, { channelId: r.channelId, mailType: r.mailType, email: rcpt, reason: 'bounce' });
}
