import { useState } from 'preact/hooks';
import { api } from '../api';
import { DataTable } from '../components/data-table';
import { Pager } from '../components/pager';
import { ProblemBanner } from '../components/problem-banner';
import { useApi } from '../use-api';
import type { Address, BroadcastFailure, Page } from '../wire';

const LIMIT = 25;

const emails = (list: Address[] | undefined) => (list ?? []).map((a) => a.email).join(', ');

/** GET /broadcasts/{id}/failures: entries that became no message (invalid, every recipient suppressed...). */
export function BroadcastFailures(props: { path: string; total: number; version: number }) {
  const [offset, setOffset] = useState(0);
  const page = useApi(() => api.get<Page<BroadcastFailure>>(`${props.path}/failures`, { limit: LIMIT, offset }), [props.path, offset, props.version]);
  return (
    <section aria-labelledby="failures-title">
      <h2 id="failures-title">Failures ({props.total.toLocaleString()})</h2>
      <ProblemBanner error={page.error} />
      <div class="wide-table wide-table-small">
        <DataTable
          caption="Failed entries"
          rows={page.data?.results}
          error={page.error}
          rowKey={(f) => String(f.messageIndex)}
          columns={[
            { header: 'Index', cell: (f) => f.messageIndex, numeric: true },
            { header: 'Recipients', cell: (f) => <span class="recipients">{[emails(f.recipients.to), emails(f.recipients.cc), emails(f.recipients.bcc)].filter(Boolean).join(', ')}</span> },
            {
              header: 'Error',
              cell: (f) => (
                <>
                  <code class="error-code">{f.errorCode}</code>
                  <span class="reply-text">{f.errorMessage}</span>
                </>
              ),
            },
          ]}
          empty={{ title: 'No failures', next: 'Every entry of the list became a message so far. Bounces after delivery attempts show in Activity.' }}
        />
      </div>
      <Pager label="Failures" offset={offset} limit={LIMIT} total={page.data?.totalCount ?? 0} onChange={setOffset} />
    </section>
  );
}

/** GET /broadcasts/{id}/suppressions: recipients left out because they were suppressed. */
export function BroadcastSuppressed(props: { path: string; total: number; version: number }) {
  const [offset, setOffset] = useState(0);
  const page = useApi(() => api.get<Page<string>>(`${props.path}/suppressions`, { limit: LIMIT, offset }), [props.path, offset, props.version]);
  return (
    <section aria-labelledby="suppressed-title">
      <h2 id="suppressed-title">Suppressed recipients ({props.total.toLocaleString()})</h2>
      <ProblemBanner error={page.error} />
      <DataTable
        caption="Suppressed recipients"
        rows={page.data?.results}
        error={page.error}
        rowKey={(e) => e}
        columns={[{ header: 'Address', cell: (e) => <code>{e}</code> }]}
        empty={{ title: 'No suppressed recipients', next: 'No recipient of this broadcast was on the channel’s broadcast suppression list. See Suppressions to manage it.' }}
      />
      <Pager label="Suppressed recipients" offset={offset} limit={LIMIT} total={page.data?.totalCount ?? 0} onChange={setOffset} />
    </section>
  );
}
