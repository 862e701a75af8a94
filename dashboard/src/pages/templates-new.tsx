import { useState } from 'preact/hooks';
import { api } from '../api';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { useAction } from '../components/use-action';
import { navigate } from '../router';
import type { TemplateJson } from '../wire';
import { createBody, NEW_TEMPLATE, TemplateForm } from './templates-form';

/**
 * A new template (POST /templates: version 1, active), then its page with the preview. There is
 * no preview before the first save: the API renders stored versions only (POST
 * /templates/{id}/render), and nothing here stores a draft behind the user's back.
 */
export function TemplateNewPage() {
  const [draft, setDraft] = useState(NEW_TEMPLATE);
  const create = useAction();
  const submit = async () => {
    const made = await create.run(() => api.post<TemplateJson>('/templates', createBody(draft)));
    if (made) navigate(`/templates/${made.id}`);
  };
  return (
    <>
      <PageHeader title="New template" description="Saved as version 1, active at once. Its page then previews it with sample data." />
      <section class="card page-section" aria-labelledby="new-template">
        <h2 id="new-template">Template</h2>
        <ProblemBanner error={create.error} />
        <TemplateForm value={draft} onChange={setDraft} submitLabel="Create template" busy={create.busy} error={create.error} onSubmit={submit} />
      </section>
    </>
  );
}
