import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from './api';
import { Link } from './router';
import { NAV, activeNav } from './routes';

/**
 * The frame of every page once signed in: a skip link, the banner with the sign-out button, the
 * navigation (a menu button opens it on narrow screens) and the main landmark, which starts with
 * why the last sign-out failed (`logoutError`), if it did.
 */
export function Layout(props: { path: string; onLogout: () => void; logoutError?: unknown; children: ComponentChildren }) {
  const [menuOpen, setMenuOpen] = useState(false);
  const active = activeNav(props.path);
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <Link to="/" class="brand">
          postrider
        </Link>
        <button type="button" class="button menu-button" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <button type="button" class="button logout" onClick={props.onLogout}>
          Sign out
        </button>
      </header>
      <nav id="main-nav" class={menuOpen ? 'sidenav open' : 'sidenav'} aria-label="Main">
        <ul>
          {NAV.map((n) => (
            <li key={n.to}>
              <Link to={n.to} aria-current={n.to === active ? 'page' : undefined} onClick={() => setMenuOpen(false)}>
                {n.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" class="content" tabIndex={-1}>
        <LogoutFailed error={props.logoutError} />
        {props.children}
      </main>
    </div>
  );
}

/** A sign-out the daemon did not confirm: the session may still be valid, so the user is told, and to retry. */
function LogoutFailed(props: { error: unknown }) {
  if (!props.error) return null;
  const why = props.error instanceof ApiError ? props.error.problem.title : String(props.error);
  return (
    <div class="banner banner-error" role="alert">
      <strong>Not signed out.</strong> <span>{why}, so this browser's session may still be valid: try Sign out again.</span>
    </div>
  );
}
