import { commitMessages, type CommitInput } from '../store/messages.js';
import type { SubmissionDeps } from './deps.js';

/**
 * Commits accepted messages durably, then tells onQueued and hands those committed unfinished (to
 * compose, to sign) to the finishing stage: the one way submissions enqueue. The caller answers
 * (200, 250) when this resolves, without waiting for composition or signatures.
 */
export async function enqueue(deps: SubmissionDeps, input: CommitInput): Promise<void> {
  await commitMessages(deps.store, input);
  if (input.messages.length === 0) return;
  deps.onQueued?.(input.messages);
  const unsigned = input.messages.filter((m) => m.signingDomain || m.compose !== undefined);
  // A broadcast's expansion commits thousands: they wait in the store, behind the sends.
  const lane = (background: boolean) => unsigned.filter((m) => (m.record.broadcastId !== undefined) === background).map((m) => m.record.id);
  const [now, later] = [lane(false), lane(true)];
  if (now.length > 0) deps.signing.schedule(now);
  if (later.length > 0) deps.signing.schedule(later, { background: true });
}
