/**
 * Client-side routing under /dashboard: the path after the base names the page, history
 * pushState moves between pages without a reload, and the daemon answers every /dashboard/*
 * path with the app (SPA fallback), so a reload or a shared link opens the same page.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/dashboard';

/** The page path without the base: "/", "/channels", "/activity/messages/123". */
export function currentPath(): string {
  const p = window.location.pathname;
  const rest = p.startsWith(BASE) ? p.slice(BASE.length) : p;
  return rest === '' ? '/' : rest;
}

const listeners = new Set<() => void>();

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = BASE + (to === '/' ? '/' : to);
  if (opts.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  for (const l of listeners) l();
  window.scrollTo(0, 0);
}

/** The current page path and query; re-renders on navigation and back/forward. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((n) => n + 1);
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return { path: currentPath(), query: new URLSearchParams(window.location.search) };
}

/** A route table entry: a pattern such as "/channels/:id" and the page it shows. */
export interface Route {
  pattern: string;
  render: (params: Record<string, string>) => ComponentChildren;
}

/** The params of the first pattern that matches the path, or null. */
export function matchRoute(routes: Route[], path: string): { route: Route; params: Record<string, string> } | null {
  const parts = path.split('/').filter(Boolean);
  for (const route of routes) {
    const want = route.pattern.split('/').filter(Boolean);
    if (want.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = want.every((w, i) => (w.startsWith(':') ? ((params[w.slice(1)] = decodeURIComponent(parts[i])), true) : w === parts[i]));
    if (ok) return { route, params };
  }
  return null;
}

/** An in-app link: a real href (open in new tab works), navigation without reload on a plain click. */
export function Link(props: {
  to: string;
  class?: string;
  children: ComponentChildren;
  'aria-current'?: 'page';
  'aria-label'?: string;
  onClick?: () => void;
}): JSX.Element {
  return (
    <a
      href={BASE + (props.to === '/' ? '/' : props.to)}
      class={props.class}
      aria-current={props['aria-current']}
      aria-label={props['aria-label']}
      onClick={(e) => {
        props.onClick?.();
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}
