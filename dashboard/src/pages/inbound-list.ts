import { useEffect, useRef, useState } from 'preact/hooks';
import { whenSignedInAgain } from '../api';
import type { CursorList } from '../components/load-more';

/** A page of a list on an opaque text cursor: GET /inbound/messages answers `after`, null after the last page. */
export interface TextCursorPage<T> {
  results: T[];
  after: string | null;
}

type State<T> = Pick<CursorList<T>, 'items' | 'more' | 'loading' | 'error'> & { after: string | null };
const START = { items: null, more: false, loading: true, error: null, after: null };

/**
 * A list read page by page on a text cursor (the activity lists' useCursorList has a numeric
 * one): the first page when `deps` change or on `reload`, the next one on `loadMore` while the
 * last answer named an `after`. A load overtaken by newer deps is dropped; one at a time.
 */
export function useTextCursorList<T>(load: (after: string | null) => Promise<TextCursorPage<T>>, deps: unknown[]): Omit<CursorList<T>, 'totalCount' | 'update'> {
  const [state, setState] = useState<State<T>>(START);
  const generation = useRef(0);
  const inFlight = useRef(false);
  const fetchPage = (after: string | null, previous: T[]) => {
    const mine = generation.current;
    inFlight.current = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    const done = () => mine === generation.current && ((inFlight.current = false), true);
    load(after).then(
      (p) => done() && setState({ items: [...previous, ...p.results], more: p.after !== null, loading: false, error: null, after: p.after }),
      (error: unknown) => done() && setState((s) => ({ ...s, items: s.items ?? previous, loading: false, error })),
    );
  };
  const start = () => {
    generation.current += 1;
    setState(START);
    fetchPage(null, []);
  };
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(start, deps);
  // A first page refused because the session ended (nothing shown yet) loads once the user has signed in again.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => (!state.items?.length ? whenSignedInAgain(state.error, start) : undefined), [state.error]);
  const loadMore = () => {
    if (!inFlight.current && state.after !== null && state.items) fetchPage(state.after, state.items);
  };
  return { items: state.items, more: state.more, loading: state.loading, error: state.error, loadMore, reload: start };
}
