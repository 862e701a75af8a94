import { commitMessages, type CommitInput } from '../store/messages.js';
import type { SubmissionDeps } from './deps.js';

/** Commits accepted messages durably, then tells onQueued: the one way submissions enqueue. */
export async function enqueue(deps: SubmissionDeps, input: CommitInput): Promise<void> {
  await commitMessages(deps.store, input);
  if (input.messages.length > 0) deps.onQueued?.(input.messages);
}
