import { getCursorPage, useCursorList } from '../components/load-more';
import type { QueueMessage } from '../wire';

const PAGE_LIMIT = 50;

/**
 * GET /queue/messages?destination=… page by page on its `after` cursor (oldest first), as any
 * cursor list: a short page marked X-Page-Partial (the scan of queued messages stopped at its
 * cap, 2,000, before the limit, most perhaps going to other destinations) is followed at once a
 * few times, so older messages elsewhere do not show as an empty list. `replace` puts a retry's
 * or drop's answer in place of its row.
 */
export function useQueueMessages(destination: string) {
  const list = useCursorList(
    (after) => getCursorPage<QueueMessage>('/queue/messages', { destination: destination || undefined, limit: PAGE_LIMIT, after }),
    PAGE_LIMIT,
    [destination],
  );
  return { ...list, replace: (m: QueueMessage) => list.update((items) => items.map((i) => (i.messageId === m.messageId ? m : i))) };
}
