import { ApiError } from '../api';

/** An error from the API (or anything thrown) as an alert: the problem's title, detail and request id. */
export function ProblemBanner(props: { error: unknown }) {
  const e = props.error;
  if (!e) return null;
  const problem = e instanceof ApiError ? e.problem : { title: 'Something went wrong', detail: String(e), requestId: undefined };
  return (
    <div class="banner banner-error" role="alert">
      <strong>{problem.title}</strong>
      {problem.detail && <span> {problem.detail}</span>}
      {problem.requestId && <small class="muted"> (request {problem.requestId})</small>}
    </div>
  );
}
