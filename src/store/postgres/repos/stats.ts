import type { PgContext } from '../context.js';
import type { StatisticsPort } from '../../port/events.js';
import { pending } from './pending.js';

export function pgStatistics(_ctx: PgContext): StatisticsPort {
  return pending<StatisticsPort>('Statistics');
}
