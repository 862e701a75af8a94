import { PageHeader } from '../components/page-header';

/** Any /dashboard path that no route of routes.tsx matches. */
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
