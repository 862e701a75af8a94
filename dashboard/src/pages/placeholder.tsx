import { PageHeader } from '../components/page-header';

/** A page that is not built yet (issue 22): the navigation already points at it. */
export function PlaceholderPage(props: { title: string }) {
  return (
    <>
      <PageHeader title={props.title} />
      <div class="empty-state">
        <h2>Coming soon</h2>
        <p>This page is not built yet. The API serves the same data meanwhile (see README, "API").</p>
      </div>
    </>
  );
}

export function NotFoundPage() {
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        No dashboard page has this address. <a href="/dashboard/">Go to the overview.</a>
      </p>
    </>
  );
}
