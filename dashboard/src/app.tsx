import { useEffect, useState } from 'preact/hooks';
import { session, setUnauthorizedHandler, signedInAgain, type SessionInfo } from './api';
import { Layout } from './layout';
import { LoginPage } from './pages/login';
import { NotFoundPage } from './pages/not-found';
import { SessionEndedDialog } from './pages/session-ended';
import { matchRoute, navigate, useLocation } from './router';
import { ROUTES } from './routes';

/**
 * The app: asks the daemon whether the session cookie is valid (GET /dashboard/session), shows
 * the login page when not, and the page of the current path inside the layout when it is. A 401
 * from the API while signed in (session expired, signed out elsewhere, key revoked) keeps the
 * page and asks to sign in again in a dialog over it, so nothing typed is lost; revoking this
 * session's own key on the API keys page returns to the login page, with a notice saying so.
 */
export function App() {
  const [auth, setAuth] = useState<SessionInfo | null | 'unknown'>('unknown');
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [expired, setExpired] = useState(false);
  const [logoutError, setLogoutError] = useState<unknown>(null);
  const { path } = useLocation();
  useEffect(() => {
    setUnauthorizedHandler((why) => (why === undefined ? setExpired(true) : (setNotice(why), setAuth(null))));
    session.current().then(setAuth, () => setAuth(null));
  }, []);
  useEffect(() => {
    // After navigation, move focus to the page's heading so screen readers announce it.
    if (auth && auth !== 'unknown') document.getElementById('page-title')?.focus({ preventScroll: true });
  }, [path, auth]);
  if (auth === 'unknown') return <p class="muted boot">Loading…</p>;
  const signedIn = (s: SessionInfo) => (setNotice(undefined), setExpired(false), setAuth(s));
  if (auth === null) return <LoginPage notice={notice} onLogin={signedIn} />;
  // Signed out only once the daemon said so: after a failed DELETE the session may still be valid.
  const logout = async () => {
    setLogoutError(null);
    try {
      await session.logout();
    } catch (e) {
      return setLogoutError(e);
    }
    setAuth(null);
    navigate('/', { replace: true });
  };
  const match = matchRoute(ROUTES, path);
  return (
    <>
      {/* Keyed by account: signing in again to another account starts its pages afresh. */}
      <Layout key={auth.accountId} path={path} onLogout={logout} logoutError={logoutError}>
        {match ? match.route.render(match.params) : <NotFoundPage />}
      </Layout>
      <SessionEndedDialog open={expired} onLogin={(s) => (signedIn(s), signedInAgain())} onClose={() => setExpired(false)} />
    </>
  );
}
