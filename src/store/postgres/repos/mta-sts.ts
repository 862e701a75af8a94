import type { PgContext } from '../context.js';
import type { MtaStsPort } from '../../port/delivery-state.js';
import { pending } from './pending.js';

export function pgMtaSts(_ctx: PgContext): MtaStsPort {
  return pending<MtaStsPort>('MtaSts');
}
