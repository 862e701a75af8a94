import type { PgContext } from '../context.js';
import type { TlsRptPort } from '../../port/delivery-state.js';
import { pending } from './pending.js';

export function pgTlsRpt(_ctx: PgContext): TlsRptPort {
  return pending<TlsRptPort>('TlsRpt');
}
