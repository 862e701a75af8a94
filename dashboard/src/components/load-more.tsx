import { useEffect, useRef, useState } from 'preact/hooks';
import { request, whenSignedInAgain } from '../api';
import type { CursorPage } from '../wire';

/**
 * A page of an `after` cursor list as the list reads it: `partial` from X-Page-Partial (the
 * daemon stopped at its scan budget, so more may follow even after a short page); totalCount
 * where the route counts (not GET /queue/messages).
 */
type Page<T> = Omit<CursorPage<T>, 'totalCount'> & { totalCount?: number; partial?: boolean };

/** Partial short pages followed in a row before the list waits for the reader again. */
const MAX_PARTIAL_HOPS = 5;

/** GET one page of an `after` cursor list, noting X-Page-Partial (docs/api.md, "Activity and statistics"). */
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
  /** From the first page again. */
  reload: () => void;
  /** Changes the loaded items in place (a row an action answered with). */
  update: (f: (items: T[]) => T[]) => void;
}

type State<T> = Omit<CursorList<T>, 'loadMore' | 'reload' | 'update'> & { after: number };
const START = { items: null, totalCount: 0, more: false, loading: true, error: null, after: 0 };

/**
 * A list read page by page on an `after` cursor (ascending, "continue strictly after": the
 * activity routes and GET /queue/messages). Starts over when `deps` change or on `reload`; a
 * load overtaken by newer deps is dropped.
 *
 * A page shorter than `limit` is the last one, unless the daemon marked it partial: its scan
 * stopped at its budget first (activity: the events it looked at; the queue: 2,000 queued
 * messages, most perhaps to other destinations). Such a page is followed at once, a few times
 * in a row, until a full page or the end: the reader asked for a page's worth, and an empty
 * partial page would otherwise show as an empty list.
 */
export function useCursorList<T>(load: (after: number) => Promise<Page<T>>, limit: number, deps: unknown[]): CursorList<T> {
  const [state, setState] = useState<State<T>>(START);
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
        const follow = p.partial === true && p.results.length < limit && hops < MAX_PARTIAL_HOPS;
        setState({ items, totalCount: p.totalCount ?? 0, more, loading: follow, error: null, after: p.after });
        if (follow) fetchPage(p.after, items, hops + 1);
      },
      (error: unknown) => done() && setState((s) => ({ ...s, items: s.items ?? previous, loading: false, error })),
    );
  };
  const start = () => {
    generation.current += 1;
    setState(START);
    fetchPage(0, []);
  };
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(start, deps);
  // A first page refused because the session ended (nothing shown yet) loads once the user has signed in again.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => (!state.items?.length ? whenSignedInAgain(state.error, start) : undefined), [state.error]);
  const loadMore = () => {
    if (!inFlight.current && state.more && state.items) fetchPage(state.after, state.items);
  };
  const update = (f: (items: T[]) => T[]) => setState((s) => ({ ...s, items: s.items && f(s.items) }));
  return { ...state, loadMore, reload: start, update };
}

/**
 * The end of a cursor list: a real "Load more" button (keyboard, screen readers) and a marker
 * that loads the next page by itself when it scrolls into view (IntersectionObserver).
 */
export function LoadMore(props: { list: Pick<CursorList<unknown>, 'more' | 'loading' | 'error' | 'loadMore'>; label?: string }) {
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
