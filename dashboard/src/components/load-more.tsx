import { useEffect, useRef, useState } from 'preact/hooks';
import { request } from '../api';
import type { CursorPage } from '../wire';

/** A page with its X-Page-Partial: the daemon stopped at its scan budget, so more may follow even after a short page. */
type Page<T> = CursorPage<T> & { partial?: boolean };

/** Partial short pages followed in a row before the list waits for the reader again. */
const MAX_PARTIAL_HOPS = 5;

/** GET one page of an `after` cursor list, noting X-Page-Partial (README "Activity"). */
export async function getCursorPage<T>(path: string, query: Record<string, string | number | undefined>): Promise<Page<T>> {
  let partial = false;
  const page = await request<Page<T>>('GET', path, { query, onHeaders: (h) => (partial = h.get('x-page-partial') === 'true') });
  return { ...page, partial };
}

export interface CursorList<T> {
  items: T[] | null;
  totalCount: number;
  more: boolean;
  loading: boolean;
  error: unknown;
  loadMore: () => void;
}

/**
 * A list read page by page on an `after` cursor (the activity routes: ascending, "continue
 * strictly after"). Starts over when `deps` change; a load overtaken by newer deps is dropped.
 * A page shorter than `limit` is the last one, unless the daemon marked it partial.
 */
export function useCursorList<T>(load: (after: number) => Promise<Page<T>>, limit: number, deps: unknown[]): CursorList<T> {
  const [state, setState] = useState<Omit<CursorList<T>, 'loadMore'> & { after: number }>({ items: null, totalCount: 0, more: false, loading: true, error: null, after: 0 });
  const generation = useRef(0);
  // The button and the marker may both ask in one tick, before `loading` renders: one load at a time.
  const inFlight = useRef(false);
  const fetchPage = (after: number, previous: T[], hops = 0) => {
    const mine = generation.current;
    inFlight.current = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    const done = () => mine === generation.current && ((inFlight.current = false), true);
    load(after).then(
      (p) => {
        if (!done()) return;
        const items = [...previous, ...p.results];
        const more = p.results.length >= limit || p.partial === true;
        // A short page cut by the daemon's budget is followed at once (a few times), as the reader asked for a page's worth.
        const follow = p.partial === true && p.results.length < limit && hops < MAX_PARTIAL_HOPS;
        setState({ items, totalCount: p.totalCount, more, loading: follow, error: null, after: p.after });
        if (follow) fetchPage(p.after, items, hops + 1);
      },
      (error: unknown) => done() && setState((s) => ({ ...s, items: s.items ?? previous, loading: false, error })),
    );
  };
  useEffect(() => {
    generation.current += 1;
    setState({ items: null, totalCount: 0, more: false, loading: true, error: null, after: 0 });
    fetchPage(0, []);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  const loadMore = () => {
    if (!inFlight.current && state.more && state.items) fetchPage(state.after, state.items);
  };
  return { ...state, loadMore };
}

/**
 * The end of a cursor list: a real "Load more" button (keyboard, screen readers) and a marker
 * that loads the next page by itself when it scrolls into view (IntersectionObserver).
 */
export function LoadMore(props: { list: CursorList<unknown>; label?: string }) {
  const marker = useRef<HTMLDivElement>(null);
  const { more, loading, loadMore, error } = props.list;
  const latest = useRef(loadMore);
  latest.current = loadMore;
  useEffect(() => {
    const el = marker.current;
    // After a failed load only the button retries (no loop of failing loads).
    if (!el || !more || error) return;
    const seen = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && latest.current(), { rootMargin: '200px' });
    seen.observe(el);
    return () => seen.disconnect();
  }, [more, loading, error]);
  if (!more) return null;
  return (
    <div class="load-more" ref={marker}>
      <button type="button" class="button" onClick={loadMore} disabled={loading} aria-busy={loading}>
        {loading ? 'Loading…' : (props.label ?? 'Load more')}
      </button>
    </div>
  );
}
