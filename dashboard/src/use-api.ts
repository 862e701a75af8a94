import { useCallback, useEffect, useState } from 'preact/hooks';
import { whenSignedInAgain } from './api';

/**
 * Loads something from the API when `deps` change: { data, error, loading, reload }. A load
 * that is overtaken by a newer one (deps changed meanwhile) is dropped, never shown; one refused
 * because the session ended runs again once the user has signed in again.
 */
export function useApi<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: unknown; loading: boolean; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    setLoading(true);
    load().then(
      (d) => current && (setData(d), setError(null), setLoading(false)),
      (e: unknown) => current && (setError(e), setLoading(false)),
    );
    return () => {
      current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  useEffect(() => whenSignedInAgain(error, reload), [error, reload]);
  return { data, error, loading, reload };
}
