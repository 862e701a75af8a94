/**
 * The MX record a domain with inbound routes needs (issue 33): mail for `<domain>` must reach
 * our host, the name the inbound listener answers as (config `hostname`, which the return-path
 * MX names too). Priority 10, as the return path's; any priority is accepted when checked
 * (return-path.ts mxPointsTo), so a domain may keep a backup MX of its own beside it.
 */
import type { ExpectedRecord } from './return-path.js';

export function inboundMxRecord(domain: string, hostname: string): ExpectedRecord {
  return { type: 'mx', host: domain, value: `10 ${hostname}` };
}
