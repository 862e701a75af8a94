import { useEffect, useRef, useState } from 'preact/hooks';
import { request } from '../api';
import type { QueueMessage, QueueMessagePage } from '../wire';

export const PAGE_LIMIT = 50;
/** Partial empty pages followed without a click (each looks at up to 2,000 queued messages). */
const AUTO_HOPS = 5;

interface State {
  items: QueueMessage[] | null;
  after: number;
  more: boolean;
  loading: boolean;
  error: unknown;
}

/**
 * GET /queue/messages?destination=… page by page on its `after` cursor (oldest first). A page
 * shorter than the limit is the last, unless the answer says X-Page-Partial: its scan of queued
 * messages stopped at its cap (2,000) before the limit, so more may follow; while nothing was
 * found yet the next page is asked at once (a few times), so older messages to other
 * destinations do not show as an empty list. `replace` puts a retry's or drop's answer in place
 * of the row; a load overtaken by a newer one (another destination, a reload) is dropped.
 */
export function useQueueMessages(destination: string) {
  const [s, setS] = useState<State>({ items: null, after: 0, more: false, loading: true, error: null });
  const generation = useRef(0);
  const load = (after: number, previous: QueueMessage[], fresh: boolean, hops = 0): void => {
    if (fresh) generation.current += 1;
    const mine = generation.current;
    setS((x) => ({ ...x, items: fresh ? null : x.items, loading: true, error: null }));
    let partial = false;
    const onHeaders = (h: Headers) => (partial = h.get('x-page-partial') === 'true');
    request<QueueMessagePage>('GET', '/queue/messages', { query: { destination: destination || undefined, limit: PAGE_LIMIT, after }, onHeaders }).then(
      (p) => {
        if (mine !== generation.current) return;
        const items = [...previous, ...p.results];
        if (partial && items.length === 0 && hops < AUTO_HOPS) return load(p.after, items, false, hops + 1);
        setS({ items, after: p.after, more: partial || p.results.length >= PAGE_LIMIT, loading: false, error: null });
      },
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
