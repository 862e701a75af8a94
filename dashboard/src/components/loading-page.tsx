import { PageHeader } from './page-header';
import { ProblemBanner } from './problem-banner';

/** A detail page while its item loads, or its error (a 404 says the item is gone). */
export function Loading(props: { title: string; error: unknown }) {
  return (
    <>
      <PageHeader title={props.title} />
      {props.error ? <ProblemBanner error={props.error} /> : <p class="muted" aria-busy="true">Loading…</p>}
    </>
  );
}
