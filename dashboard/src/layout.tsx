import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Link } from './router';
import { NAV, activeNav } from './routes';

/**
 * The frame of every page once signed in: a skip link, the banner with the sign-out button, the
 * navigation (a menu button opens it on narrow screens) and the main landmark.
 */
export function Layout(props: { path: string; onLogout: () => void; children: ComponentChildren }) {
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
        {props.children}
      </main>
    </div>
  );
}
