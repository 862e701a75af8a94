import type { PgContext } from '../context.js';
import type { EngagementPort } from '../../port/engagement.js';
import { pending } from './pending.js';

export function pgEngagement(_ctx: PgContext): EngagementPort {
  return pending<EngagementPort>('Engagement');
}
