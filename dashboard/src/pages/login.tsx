import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { session, type SessionInfo } from '../api';
import { Field } from '../components/field';
import { ProblemBanner } from '../components/problem-banner';

/**
 * Sign-in with an account-level API key. The key goes to POST /dashboard/session once; the
 * browser keeps only the HttpOnly session cookie the answer sets, never the key. `heading` names
 * the form (its element carries `titleId`); the login page and the session-ended dialog share it.
 */
export function SignInForm(props: { class: string; titleId: string; heading: ComponentChildren; onLogin: (s: SessionInfo) => void; notice?: string }) {
  const [apiKey, setApiKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const s = await session.login(apiKey.trim());
      setApiKey('');
      props.onLogin(s);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class={props.class} onSubmit={submit} aria-labelledby={props.titleId}>
      {props.heading}
      {props.notice && (
        <p class="banner banner-ok" role="status">
          {props.notice}
        </p>
      )}
      <p class="muted">Sign in with an account-level API key. The key is not stored in the browser.</p>
      <ProblemBanner error={error} />
      <Field label="API key" pointer="/apiKey" error={error} hint={<>The key printed at first start is in <code>data/initial-api-key</code>.</>}>
        {(a) => <input {...a} type="password" name="apiKey" autoComplete="current-password" required value={apiKey} onInput={(e) => setApiKey(e.currentTarget.value)} />}
      </Field>
      <button type="submit" class="button button-primary" disabled={busy || apiKey.trim() === ''}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}

/** The page without a session: the sign-in form alone. */
export function LoginPage(props: { onLogin: (s: SessionInfo) => void; notice?: string }) {
  return (
    <main class="login" id="main">
      <SignInForm class="card login-card" titleId="login-title" heading={<h1 id="login-title">postrider</h1>} onLogin={props.onLogin} notice={props.notice} />
    </main>
  );
}
