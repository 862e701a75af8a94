import { api } from '../api';
import { DeleteButton } from '../components/delete-button';
import { useAction } from '../components/use-action';
import type { TemplateJson } from '../wire';

/** POST /templates/{id}/activate {version}; the page then shows the active version and says so. */
export function useActivate(id: string, onActivated: (notice: string) => void) {
  const action = useAction();
  const run = async (version: number) => {
    if (await action.run(() => api.post<TemplateJson>(`/templates/${encodeURIComponent(id)}/activate`, { version }))) onActivated(`Version ${version} is active: sends use it.`);
  };
  return { busy: action.busy, error: action.error, run };
}

export function DeleteTemplate(props: { template: TemplateJson }) {
  const t = props.template;
  return (
    <DeleteButton label="Delete template" title={`Delete ${t.name}?`} path={`/templates/${t.id}`} back="/templates">
      <p>
        The template and all its {t.latestVersion} versions go; its id{t.alias ? ` and alias ${t.alias}` : ''} no longer name anything. This cannot be undone.
      </p>
    </DeleteButton>
  );
}
