import { useModal } from '../components/use-modal';
import type { SessionInfo } from '../api';
import { SignInForm } from './login';

/**
 * The session ended while a page was in use (a 401 from the API: idle or absolute expiry, a
 * sign-out in another tab): a modal sign-in over the page, which stays as it was, so nothing
 * typed is lost and the user submits it again once signed in. "Not now" (or Escape) closes it,
 * say to copy something out first; the next refused request opens it again.
 */
export function SessionEndedDialog(props: { open: boolean; onLogin: (s: SessionInfo) => void; onClose: () => void }) {
  const { ref, titleId } = useModal(props.open);
  const heading = (
    <>
      <h2 id={titleId}>Your session ended</h2>
      <p>What you typed is still on the page: sign in again, then submit it again.</p>
    </>
  );
  return (
    <dialog ref={ref} class="dialog" aria-labelledby={titleId} onClose={props.onClose}>
      {props.open && <SignInForm class="login-card" titleId={titleId} heading={heading} onLogin={props.onLogin} />}
      <div class="actions">
        <button type="button" class="button" onClick={props.onClose}>
          Not now
        </button>
      </div>
    </dialog>
  );
}
