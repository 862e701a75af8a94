import { useEffect, useState } from 'preact/hooks';
import { whenSignedInAgain } from '../api';

/**
 * One user action against the API (a save, a delete, a verify): `run(fn)` marks it busy, keeps
 * its error (an ApiError for ProblemBanner and Field) and resolves to the answer, or undefined
 * when it failed. A new run clears the previous error, and so does signing in again after a 401.
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
  // A refusal for the session's end is outdated once the user signed in again (the form is still filled: submit again).
  useEffect(() => whenSignedInAgain(error, () => setError(null)), [error]);
  return { busy, error, run, clear: () => setError(null) };
}
