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
  const unsigned = input.messages.filter((m) => m.signingDomain || m.compose !== undefined).map((m) => m.record.id);
  if (unsigned.length > 0) deps.signing.schedule(unsigned);
}
