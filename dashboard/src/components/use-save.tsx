import { useState } from 'preact/hooks';
import { ProblemBanner } from './problem-banner';
import { useAction } from './use-action';

export interface Save {
  busy: boolean;
  error: unknown;
  /** The last save succeeded (until the next one starts). */
  saved: boolean;
  /** Runs the save; true when it answered (something truthy), as the form then reloads. */
  run: (fn: () => Promise<unknown>) => Promise<boolean>;
}

/** A settings form's save: a useAction that remembers its success for SaveStatus. */
export function useSave(): Save {
  const action = useAction();
  const [saved, setSaved] = useState(false);
  const run = async (fn: () => Promise<unknown>) => {
    setSaved(false);
    const ok = !!(await action.run(fn));
    if (ok) setSaved(true);
    return ok;
  };
  return { busy: action.busy, error: action.error, saved, run };
}

/** Above a settings form: the failed save's problem, or "Saved." after a successful one. */
export function SaveStatus(props: { save: Save }) {
  return (
    <>
      <ProblemBanner error={props.save.error} />
      {props.save.saved && (
        <p class="banner banner-ok" role="status">
          Saved.
        </p>
      )}
    </>
  );
}
