/** A message's delivery jobs, through the `messageJobs` index written with the jobs. */
import type { DeliveryJob } from '../../domain/types.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';

export function jobsOfMessage(store: Store, messageId: string): DeliveryJob[] {
  const out: DeliveryJob[] = [];
  for (const key of dbsOf(store).messageJobs.getKeys({ start: [messageId], end: [messageId, KEY_MAX] })) {
    const job = dbsOf(store).jobs.get((key as [string, string])[1]) as DeliveryJob | undefined;
    if (job) out.push(job);
  }
  return out;
}
