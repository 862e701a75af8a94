import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Loading } from '../components/loading-page';
import { PageHeader } from '../components/page-header';
import { useAction } from '../components/use-action';
import { ProblemBanner } from '../components/problem-banner';
import { navigate, useLocation } from '../router';
import { useApi } from '../use-api';
import type { TemplateJson } from '../wire';
import { DeleteTemplate, useActivate } from './templates-actions';
import { contentChanged, draftOf, patchBody, TemplateForm } from './templates-form';
import { PreviewPanel, useEditorPreview } from './templates-draft-preview';
import { parseSample, useSampleText } from './templates-preview';
import { TemplateVersions } from './templates-versions';

/**
 * One stored template (`?version=N` shows that version, else the active one): the editor beside
 * a preview the API renders with sample data, the versions with Activate, delete.
 */
export function TemplatePage(props: { id: string }) {
  const { query } = useLocation();
  const asked = query.get('version') ?? '';
  const path = `/templates/${encodeURIComponent(props.id)}`;
  const tpl = useApi(() => api.get<TemplateJson>(path, { version: asked || undefined }), [props.id, asked]);
  // What the last save or activation did; kept here, as the editor below starts afresh with the version it made.
  const [notice, setNotice] = useState('');
  // Notices are about the active version, which the page shows after a save or an activation.
  useEffect(() => {
    if (asked) setNotice('');
  }, [asked]);
  const t = tpl.data;
  if (!t) return <Loading title="Template" error={tpl.error} />;
  const changed = (message: string) => {
    setNotice(message);
    if (asked) navigate(`/templates/${t.id}`);
    else tpl.reload();
  };
  return <TemplateWorkbench key={`${t.id}:${t.version.version}:${t.updatedAt}`} template={t} notice={notice} onChanged={changed} />;
}

function TemplateWorkbench(props: { template: TemplateJson; notice: string; onChanged: (notice: string) => void }) {
  const t = props.template;
  const [draft, setDraft] = useState(draftOf(t));
  const [sampleText, setSampleText] = useSampleText(t.id);
  const sample = parseSample(sampleText);
  const editor = useEditorPreview(draft, 'json' in sample ? sample.json : null, t);
  const save = useAction();
  const dirty = contentChanged(draft, t.version);
  const submit = async () => {
    const made = await save.run(() => api.patch<TemplateJson>(`/templates/${t.id}`, patchBody(draft, t.version)));
    if (made) props.onChanged(dirty ? `Saved as version ${made.version.version}, which is now active: sends use it.` : 'Saved.');
  };
  return (
    <>
      <PageHeader title={t.name} description={<Summary template={t} />} actions={<DeleteTemplate template={t} />} />
      {props.notice && !save.error && (
        <p class="banner banner-ok" role="status">
          {props.notice}
        </p>
      )}
      <InactiveVersion template={t} onActivated={props.onChanged} />
      <div class="template-workbench">
        <section class="card page-section" aria-labelledby="tpl-editor">
          <h2 id="tpl-editor">Edit version {t.version.version}</h2>
          <ProblemBanner error={save.error} />
          <TemplateForm
            value={draft}
            onChange={setDraft}
            submitLabel={dirty ? `Save as version ${t.latestVersion + 1}` : 'Save'}
            busy={save.busy}
            error={save.error}
            renderError={editor.preview.error}
            onSubmit={submit}
          />
          <p class="muted">Changing the subject, HTML, text or styles saves a new version, which becomes active at once. Name, alias and channels change no version.</p>
        </section>
        <PreviewPanel
          sampleText={sampleText}
          onSample={setSampleText}
          sampleError={'error' in sample ? sample.error : undefined}
          editor={editor}
          savedNote={`Sends use version ${t.activeVersion} until you save.`}
        />
      </div>
      <TemplateVersions template={t} onActivated={props.onChanged} />
    </>
  );
}

function Summary(props: { template: TemplateJson }) {
  const t = props.template;
  const shown = t.version.version;
  return (
    <>
      {t.alias && (
        <>
          Alias <code>{t.alias}</code>.{' '}
        </>
      )}
      Version {shown} of {t.latestVersion}
      {shown === t.activeVersion ? ', active.' : `; version ${t.activeVersion} is active.`}
    </>
  );
}

/** Shown while an inactive version is on screen: which one sends use, and Activate for this one. */
function InactiveVersion(props: { template: TemplateJson; onActivated: (notice: string) => void }) {
  const t = props.template;
  const activate = useActivate(t.id, props.onActivated);
  if (t.version.version === t.activeVersion) return null;
  return (
    <div class="banner banner-warn" role="note" aria-label="Inactive version">
      <p>
        You are looking at version {t.version.version}. Version {t.activeVersion} is active: sends use it.
      </p>
      <ProblemBanner error={activate.error} />
      <button type="button" class="button" disabled={activate.busy} onClick={() => activate.run(t.version.version)}>
        Activate version {t.version.version}
      </button>
    </div>
  );
}
