import type { PgContext } from '../context.js';
import type { DnsFailuresPort } from '../../port/delivery-state.js';
import { pending } from './pending.js';

export function pgDnsFailures(_ctx: PgContext): DnsFailuresPort {
  return pending<DnsFailuresPort>('DnsFailures');
}
