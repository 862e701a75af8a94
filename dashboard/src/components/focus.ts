/**
 * After an action removes the control that had focus (a removed row's button, a Cancel button
 * that no longer applies), focus would fall back to <body>: put it on the page's heading, as
 * after navigation, so keyboard and screen reader users continue from a known place. From a
 * dialog, once it has closed: closing gives focus back to the control that opened it.
 */
export function focusPageTitle(): void {
  const focus = () => document.getElementById('page-title')?.focus({ preventScroll: true });
  const dialog = document.querySelector('dialog[open]');
  if (dialog) dialog.addEventListener('close', focus, { once: true });
  else window.setTimeout(focus, 0);
}
