/**
 * The PostgreSQL engine's fixtures for the delivery queue (engine-fixtures.ts dispatches to
 * them). It may read the engine's tables: it stands in for what the port cannot inspect.
 */
import { pgContextOf, type PostgresStore } from '../../src/store/postgres/engine.js';

/**
 * Every [messageId, jobId] link the store keeps from a message to its delivery jobs: in this
 * engine a link is the job's row itself (open or finished), so a removed message leaves none.
 */
export async function pgMessageJobLinks(store: PostgresStore): Promise<[string, string][]> {
  const rows = await pgContextOf(store).sql<{ message_id: string; id: string }[]>`
    SELECT message_id, id FROM jobs UNION ALL SELECT message_id, id FROM finished_jobs ORDER BY 1, 2`;
  return rows.map((r) => [r.message_id, r.id]);
}
