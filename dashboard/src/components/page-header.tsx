import type { ComponentChildren } from 'preact';

/** The title of a page (the one h1, which the layout focuses after navigation) and its actions. */
export function PageHeader(props: { title: string; description?: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <header class="page-header">
      <div>
        <h1 tabIndex={-1} id="page-title">
          {props.title}
        </h1>
        {props.description && <p class="muted">{props.description}</p>}
      </div>
      {props.actions && <div class="actions">{props.actions}</div>}
    </header>
  );
}
