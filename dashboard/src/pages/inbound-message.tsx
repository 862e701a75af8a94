import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { useAction } from '../components/use-action';
import { Link } from '../router';
import { useApi } from '../use-api';
import type { InboundMessageDetails } from '../wire';
import { AuthVerdicts } from './inbound-auth';
import { DownloadRaw, InboundSummary, PostAttempts } from './inbound-message-parts';
import { useRouteOptions } from './inbound-nav';

/** How often the page asks again while the message waits for its POST (one read by id). */
const REFRESH_MS = 2_000;

/**
 * One received message (GET /inbound/messages/{id}): envelope, From and Subject, status, the
 * SPF/DKIM/DMARC/ARC verdicts in plain words, the POSTs to the route's URL with their answers,
 * the message as received (download), and Retry for a failed one (POST …/retry; the 409 problem
 * shows when the message is no longer failed). Refreshed every 2 s while it is `received`.
 */
export function InboundMessagePage(props: { id: string }) {
  const path = `/inbound/messages/${encodeURIComponent(props.id)}`;
  const [fresh, setFresh] = useState<InboundMessageDetails | null>(null);
  const loaded = useApi(() => (setFresh(null), api.get<InboundMessageDetails>(path)), [path]);
  const routes = useRouteOptions();
  const m = fresh ?? loaded.data;
  // Failed refreshes (daemon restarting, session ended): each schedules the next, so the page keeps refreshing.
  const [misses, setMisses] = useState(0);
  useEffect(() => {
    if (m?.status !== 'received') return;
    const timer = window.setTimeout(() => api.get<InboundMessageDetails>(path).then(setFresh, () => setMisses((n) => n + 1)), REFRESH_MS);
    return () => window.clearTimeout(timer);
  }, [m, path, misses]);
  const retry = useRetry(path, setFresh);
  const route = m && routes.data ? (routes.data.results.find((r) => r.id === m.routeId) ?? null) : undefined;
  return (
    <>
      <PageHeader
        title={m ? m.subject || '(no subject)' : 'Inbound message'}
        description={<Link to="/inbound/messages">Inbound messages</Link>}
        actions={
          m?.status === 'failed' ? (
            <button type="button" class="button button-primary" disabled={retry.busy} onClick={retry.run}>
              {retry.busy ? 'Retrying…' : 'Retry'}
            </button>
          ) : undefined
        }
      />
      <ProblemBanner error={loaded.error ?? routes.error ?? retry.error} />
      {!m && !loaded.error && <p class="muted">Loading…</p>}
      {m && (
        <div class="message-view">
          <InboundSummary m={m} route={route} />
          <section aria-labelledby="in-auth">
            <h2 id="in-auth">Authentication</h2>
            <AuthVerdicts auth={m.auth} />
          </section>
          <section aria-labelledby="in-posts">
            <h2 id="in-posts">POSTs to your app</h2>
            <PostAttempts m={m} />
          </section>
          <section aria-labelledby="in-raw">
            <h2 id="in-raw">As received</h2>
            <p class="muted">The message exactly as the sending server delivered it.</p>
            <DownloadRaw id={m.id} />
          </section>
        </div>
      )}
    </>
  );
}

/**
 * POST /inbound/messages/{id}/retry: a failed message is due again at once, its attempts kept.
 * Anything else answers 409 conflict (retried meanwhile, or posted): its problem text stays on
 * the page, which reads the message again to show what it is now.
 */
function useRetry(path: string, show: (m: InboundMessageDetails) => void) {
  const action = useAction();
  const run = async () => {
    const m = await action.run(() => api.post<InboundMessageDetails>(`${path}/retry`));
    if (m) show(m);
    else await api.get<InboundMessageDetails>(path).then(show, () => undefined);
  };
  return { busy: action.busy, error: action.error, run };
}
