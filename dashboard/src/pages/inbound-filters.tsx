import { useEffect, useState } from 'preact/hooks';
import { Field } from '../components/field';
import type { InboundRoute } from '../wire';

/** The filters of GET /inbound/messages the page offers, under the API's names (kept in the page's address). */
export type InboundFilter = {
  routeId: string;
  status: '' | 'received' | 'posted' | 'failed';
  from: string;
  subject: string;
};

export const NO_FILTER: InboundFilter = { routeId: '', status: '', from: '', subject: '' };

/** What each status means, for the status filter. */
const STATUSES: [InboundFilter['status'], string][] = [
  ['', 'All'],
  ['received', 'Received (POST to come)'],
  ['posted', 'Posted (your app answered 2xx)'],
  ['failed', 'Failed (retrying stopped)'],
];

/** The filter form; applied on submit. */
export function InboundFilters(props: { value: InboundFilter; routes: InboundRoute[]; error: unknown; onApply: (f: InboundFilter) => void }) {
  const [draft, setDraft] = useState(props.value);
  useEffect(() => setDraft(props.value), [props.value]);
  const set = (patch: Partial<InboundFilter>) => setDraft((d) => ({ ...d, ...patch }));
  return (
    <form
      class="filters activity-filters"
      aria-label="Message filters"
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply({ ...draft, from: draft.from.trim(), subject: draft.subject.trim() });
      }}
    >
      <Field label="Route" pointer="/routeId" error={props.error}>
        {(a) => (
          <select {...a} value={draft.routeId} onChange={(e) => set({ routeId: e.currentTarget.value })}>
            <option value="">All routes</option>
            {props.routes.map((r) => (
              <option value={r.id} key={r.id}>
                {r.address}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Status" pointer="/status" error={props.error}>
        {(a) => (
          <select {...a} value={draft.status} onChange={(e) => set({ status: e.currentTarget.value as InboundFilter['status'] })}>
            {STATUSES.map(([value, label]) => (
              <option value={value} key={value}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="From" pointer="/from" error={props.error} hint="Part of the sender's address, any case">
        {(a) => <input {...a} type="text" value={draft.from} onInput={(e) => set({ from: e.currentTarget.value })} />}
      </Field>
      <Field label="Subject" pointer="/subject" error={props.error} hint="Contains, any case">
        {(a) => <input {...a} type="text" value={draft.subject} onInput={(e) => set({ subject: e.currentTarget.value })} />}
      </Field>
      <div class="actions">
        <button type="submit" class="button button-primary">
          Apply filters
        </button>
        <button type="button" class="button" onClick={() => props.onApply(NO_FILTER)}>
          Clear
        </button>
      </div>
    </form>
  );
}
