import { useMemo } from 'preact/hooks';
import { withQuery } from '../api';
import { navigate, useLocation } from '../router';

/**
 * A page's filters kept in its address (?channelId=…&offset=25), so a reload or a shared link
 * shows the same list: the values read from the query over `defaults`, and a setter that
 * navigates to `path` with the values that differ from the defaults (Back returns to the
 * previous filters).
 */
export function useQueryState<T extends Record<string, string>>(path: string, defaults: T): [T, (next: T) => void] {
  const { query } = useLocation();
  const key = query.toString();
  const value = useMemo(() => {
    const v: Record<string, string> = { ...defaults };
    for (const k of Object.keys(defaults)) v[k] = query.get(k) ?? defaults[k];
    return v as T;
    // The query string is the whole input; `defaults` is a constant of the page.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  const set = (next: T) => {
    const changed: Record<string, string> = {};
    for (const k of Object.keys(defaults)) if (next[k] !== defaults[k]) changed[k] = next[k];
    navigate(withQuery(path, changed));
  };
  return [value, set];
}
