import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import type { QueueMessage } from './queue-types';

export const PAGE_LIMIT = 50;

interface State {
  items: QueueMessage[] | null;
  after: number;
  more: boolean;
  loading: boolean;
  error: unknown;
}

/**
 * GET /queue/messages?destination=… page by page on its `after` cursor (oldest first). A page
 * shorter than the limit is taken as the last. `replace` puts a retry's or drop's answer in
 * place of the row; a load overtaken by a newer one (another destination, a reload) is dropped.
 */
export function useQueueMessages(destination: string) {
  const [s, setS] = useState<State>({ items: null, after: 0, more: false, loading: true, error: null });
  const generation = useRef(0);
  const load = (after: number, previous: QueueMessage[], fresh: boolean) => {
    if (fresh) generation.current += 1;
    const mine = generation.current;
    setS((x) => ({ ...x, items: fresh ? null : x.items, loading: true, error: null }));
    api.get<{ results: QueueMessage[]; after: number }>('/queue/messages', { destination, limit: PAGE_LIMIT, after }).then(
      (p) => mine === generation.current && setS({ items: [...previous, ...p.results], after: p.after, more: p.results.length >= PAGE_LIMIT, loading: false, error: null }),
      (error: unknown) => mine === generation.current && setS((x) => ({ ...x, items: x.items ?? previous, loading: false, error })),
    );
  };
  useEffect(() => load(0, [], true), [destination]);
  return {
    ...s,
    loadMore: () => !s.loading && s.items && load(s.after, s.items, false),
    reload: () => load(0, [], true),
    replace: (m: QueueMessage) => setS((x) => ({ ...x, items: x.items?.map((i) => (i.messageId === m.messageId ? m : i)) ?? null })),
  };
}
