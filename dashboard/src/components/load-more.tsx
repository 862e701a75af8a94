import { useEffect, useRef, useState } from 'preact/hooks';

interface Page<T> {
  totalCount: number;
  after: number;
  results: T[];
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
 * A page shorter than `limit` is the last one.
 */
export function useCursorList<T>(load: (after: number) => Promise<Page<T>>, limit: number, deps: unknown[]): CursorList<T> {
  const [state, setState] = useState<Omit<CursorList<T>, 'loadMore'> & { after: number }>({ items: null, totalCount: 0, more: false, loading: true, error: null, after: 0 });
  const generation = useRef(0);
  // The button and the marker may both ask in one tick, before `loading` renders: one load at a time.
  const inFlight = useRef(false);
  const fetchPage = (after: number, previous: T[]) => {
    const mine = generation.current;
    inFlight.current = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    const done = () => mine === generation.current && ((inFlight.current = false), true);
    load(after).then(
      (p) => done() && setState({ items: [...previous, ...p.results], totalCount: p.totalCount, more: p.results.length >= limit, loading: false, error: null, after: p.after }),
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
