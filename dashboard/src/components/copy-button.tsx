import { useState } from 'preact/hooks';

/** Copies `text` to the clipboard; says "Copied" for two seconds (announced to screen readers). */
export function CopyButton(props: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setState('copied');
    } catch {
      setState('failed');
    }
    window.setTimeout(() => setState('idle'), 2000);
  };
  const label = props.label ?? 'Copy';
  const shown = state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : label;
  // The accessible name starts with the visible text, whatever it says now (WCAG 2.5.3 label in name).
  return (
    <button type="button" class="button button-small" onClick={copy} aria-label={`${shown}: ${props.text.slice(0, 40)}`}>
      <span aria-live="polite">{shown}</span>
    </button>
  );
}
