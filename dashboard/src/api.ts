/**
 * The dashboard's one way to the daemon: the public API with the session cookie. Every request
 * is same-origin with credentials and carries X-Postrider-Dashboard: 1, the header without which
 * the daemon refuses the cookie (a cross-site form cannot set it: CSRF defence beside
 * SameSite=Strict). Errors come back as ApiError with the problem body's title, detail and
 * per-field errors (keyed by JSON pointer, docs/api.md, "Errors"), so forms show them beside fields.
 */
import type { DashboardSession, DashboardSessionAnswer } from './wire';

export const DASHBOARD_HEADER = 'X-Postrider-Dashboard';

export interface FieldError {
  code: string;
  message: string;
  /** Where a templating_error is in the template (from 1), when Handlebars says. */
  line?: number;
  column?: number;
}

/** "line 2, column 6" of a field error, or undefined when it names no place. */
export function placeOf(e: FieldError): string | undefined {
  if (e.line === undefined) return undefined;
  return e.column === undefined ? `line ${e.line}` : `line ${e.line}, column ${e.column}`;
}

export interface Problem {
  status: number;
  code: string;
  title: string;
  detail?: string;
  requestId?: string;
  errors?: Record<string, FieldError[]>;
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title);
  }

  get status(): number {
    return this.problem.status;
  }

  /** The messages of one field (JSON pointer such as "/name"), joined for display, each after its place in a template if any. */
  fieldMessage(pointer: string): string | undefined {
    const list = this.problem.errors?.[pointer];
    const text = (e: FieldError) => (placeOf(e) ? `At ${placeOf(e)}: ${e.message}` : e.message);
    return list && list.length > 0 ? list.map(text).join('; ') : undefined;
  }
}

/**
 * Called when an answer says the session is gone (401): the app asks to sign in again over the
 * page, which keeps what was typed; with `notice` when the dashboard itself ended the session and
 * says why (endSession), it shows the login page instead.
 */
let onUnauthorized: (notice?: string) => void = () => {};

export function setUnauthorizedHandler(handler: (notice?: string) => void): void {
  onUnauthorized = handler;
}

/** What to do once the user has signed in again over the page, for each load or action the ended session refused. */
const afterSignIn = new Set<() => void>();

/**
 * For an effect on a load's or an action's error: when `error` is a 401 (the session ended),
 * `then` runs once the user signs in again in the session-ended dialog (a load runs again, an
 * action's refusal is cleared), so the page does not go on showing the refusal. Returns the
 * effect's cleanup.
 */
export function whenSignedInAgain(error: unknown, then: () => void): (() => void) | undefined {
  if (!(error instanceof ApiError && error.status === 401)) return undefined;
  afterSignIn.add(then);
  return () => void afterSignIn.delete(then);
}

/** The user signed in again over the page: what waits for it (whenSignedInAgain) runs. */
export function signedInAgain(): void {
  for (const then of [...afterSignIn]) then();
}

/** Returns to the login page saying why (the user revoked the key of this very session). */
export function endSession(notice: string): void {
  onUnauthorized(notice);
}

type Query = Record<string, string | number | boolean | undefined | null>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `${path}?${s}` : path;
}

async function problemOf(res: Response): Promise<Problem> {
  const fallback: Problem = { status: res.status, code: 'unknown', title: res.statusText || `HTTP ${res.status}` };
  try {
    const body = (await res.json()) as Partial<Problem>;
    return { ...fallback, ...body, status: res.status };
  } catch {
    return fallback;
  }
}

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  /** Do not treat a 401 as the end of the session (the login form itself). */
  quiet401?: boolean;
  /** Sees a successful answer's headers (X-Page-Partial of GET /queue/messages). */
  onHeaders?: (headers: Headers) => void;
}

/** One request to the API: the answer when it is a success, else an ApiError (a 401 ends the session). */
async function send(method: string, path: string, o: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { [DASHBOARD_HEADER]: '1', accept: 'application/json', ...o.headers };
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(withQuery(path, o.query), {
      method,
      headers,
      credentials: 'same-origin',
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
    });
  } catch {
    throw new ApiError({ status: 0, code: 'network', title: 'The daemon cannot be reached', detail: 'Check that postrider is running, then retry.' });
  }
  if (!res.ok) {
    const problem = await problemOf(res);
    if (res.status === 401 && !o.quiet401) onUnauthorized();
    throw new ApiError(problem);
  }
  o.onHeaders?.(res.headers);
  return res;
}

/** One API call; resolves to the parsed JSON body (undefined for 204), rejects with ApiError. */
export async function request<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
  const res = await send(method, path, o);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/**
 * GET a file the API answers (an inbound message as received): its bytes. A plain link cannot
 * fetch it, as the session cookie counts only with the dashboard header.
 */
export async function requestFile(path: string): Promise<Blob> {
  return (await send('GET', path, { headers: { accept: '*/*' } })).blob();
}

export const api = {
  get: <T>(path: string, query?: Query) => request<T>('GET', path, { query }),
  /** Without a body for the bodiless POSTs (verify, cancel, retry...). */
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, { body }),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, { body }),
  del: (path: string) => request<void>('DELETE', path),
};

export type SessionInfo = DashboardSession;

export const session = {
  login: (apiKey: string) => request<DashboardSessionAnswer<SessionInfo>>('POST', '/dashboard/session', { body: { apiKey }, quiet401: true }).then((r) => r.session),
  /** The current session, or null without one (200 either way: no console error on the login page). */
  current: () => request<DashboardSessionAnswer>('GET', '/dashboard/session', { quiet401: true }).then((r) => r.session),
  logout: () => request<void>('DELETE', '/dashboard/session', { quiet401: true }),
};
