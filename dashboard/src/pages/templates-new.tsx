import { useState } from 'preact/hooks';
import { api } from '../api';
import { PageHeader } from '../components/page-header';
import { ProblemBanner } from '../components/problem-banner';
import { useAction } from '../components/use-action';
import { navigate } from '../router';
import type { TemplateJson } from '../wire';
import { PreviewPanel, useEditorPreview } from './templates-draft-preview';
import { createBody, NEW_TEMPLATE, TemplateForm } from './templates-form';
import { keepSample, NEW_SAMPLE, parseSample, useSampleText } from './templates-preview';

/**
 * A new template (POST /templates: version 1, active), then its page. The editor's content is
 * previewed before that first save through POST /templates/render, which stores nothing; the
 * sample data typed here goes with the template to its page.
 */
export function TemplateNewPage() {
  const [draft, setDraft] = useState(NEW_TEMPLATE);
  const [sampleText, setSampleText] = useSampleText(NEW_SAMPLE);
  const sample = parseSample(sampleText);
  const editor = useEditorPreview(draft, 'json' in sample ? sample.json : null);
  const create = useAction();
  const submit = async () => {
    const made = await create.run(() => api.post<TemplateJson>('/templates', createBody(draft)));
    if (!made) return;
    keepSample(made.id, sampleText);
    navigate(`/templates/${made.id}`);
  };
  return (
    <>
      <PageHeader title="New template" description="Saved as version 1, active at once." />
      <div class="template-workbench">
        <section class="card page-section" aria-labelledby="new-template">
          <h2 id="new-template">Template</h2>
          <ProblemBanner error={create.error} />
          <TemplateForm value={draft} onChange={setDraft} submitLabel="Create template" busy={create.busy} error={create.error} renderError={editor.preview.error} onSubmit={submit} />
        </section>
        <PreviewPanel
          sampleText={sampleText}
          onSample={setSampleText}
          sampleError={'error' in sample ? sample.error : undefined}
          editor={editor}
          savedNote="Nothing is stored until you create the template."
        />
      </div>
    </>
  );
}
