import { useState } from 'preact/hooks';

/**
 * One user action against the API (a save, a delete, a verify): `run(fn)` marks it busy, keeps
 * its error (an ApiError for ProblemBanner and Field) and resolves to the answer, or undefined
 * when it failed. A new run clears the previous error.
 */
export function useAction(): { busy: boolean; error: unknown; run: <T>(fn: () => Promise<T>) => Promise<T | undefined>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(null) };
}
