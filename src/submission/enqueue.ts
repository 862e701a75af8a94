import { awaitsFinishing, type SubmissionCommit } from '../store/port/messages.js';
import type { SubmissionDeps } from './deps.js';

/**
 * Commits accepted messages durably, then tells onQueued and hands those committed unfinished (to
 * compose, to sign) to the finishing stage: the one way submissions enqueue. The caller answers
 * (200, 250) when this resolves, without waiting for composition or signatures.
 */
export async function enqueue(deps: SubmissionDeps, input: SubmissionCommit): Promise<void> {
  await deps.store.messages.commit(input);
  if (input.messages.length === 0) return;
  deps.onQueued?.(input.messages);
  // A broadcast's expansion commits thousands: they wait in the store, behind the sends.
  const [now, later]: [string[], string[]] = [[], []];
  for (const m of input.messages) {
    if (awaitsFinishing(m)) (m.record.broadcastId === undefined ? now : later).push(m.record.id);
  }
  if (now.length > 0) deps.signing.schedule(now);
  if (later.length > 0) deps.signing.schedule(later, { background: true });
}
