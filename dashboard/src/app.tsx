import { useEffect, useState } from 'preact/hooks';
import { session, setUnauthorizedHandler, type SessionInfo } from './api';
import { Layout } from './layout';
import { LoginPage } from './pages/login';
import { NotFoundPage } from './pages/not-found';
import { matchRoute, navigate, useLocation } from './router';
import { ROUTES } from './routes';

/**
 * The app: asks the daemon whether the session cookie is valid (GET /dashboard/session), shows
 * the login page when not, and the page of the current path inside the layout when it is. Any
 * 401 from the API (session expired, key revoked) returns to the login page, and so does
 * revoking this session's own key on the API keys page (with a notice saying so).
 */
export function App() {
  const [auth, setAuth] = useState<SessionInfo | null | 'unknown'>('unknown');
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const { path } = useLocation();
  useEffect(() => {
    setUnauthorizedHandler((why) => (setNotice(why), setAuth(null)));
    session.current().then(setAuth, () => setAuth(null));
  }, []);
  useEffect(() => {
    // After navigation, move focus to the page's heading so screen readers announce it.
    if (auth && auth !== 'unknown') document.getElementById('page-title')?.focus({ preventScroll: true });
  }, [path, auth]);
  if (auth === 'unknown') return <p class="muted boot">Loading…</p>;
  if (auth === null) return <LoginPage notice={notice} onLogin={(s) => (setNotice(undefined), setAuth(s))} />;
  const logout = async () => {
    await session.logout().catch(() => undefined);
    setAuth(null);
    navigate('/', { replace: true });
  };
  const match = matchRoute(ROUTES, path);
  return (
    <Layout path={path} onLogout={logout}>
      {match ? match.route.render(match.params) : <NotFoundPage />}
    </Layout>
  );
}
