import type { PgContext } from '../context.js';
import type { MetaPort } from '../../port/meta.js';
import { pending } from './pending.js';

export function pgMeta(_ctx: PgContext): MetaPort {
  return pending<MetaPort>('Meta');
}
