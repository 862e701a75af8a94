/**
 * linkBaseUrl uses a verified link host only while its CNAME names the host of the current
 * publicUrl (issue 30): after publicUrl changed, the record verified for the old host leads there,
 * publicUrl to where the daemon is now.
 */
import { describe, expect, it } from 'vitest';
import { linkBaseUrl } from '../../src/domain/link-hosts.js';
import type { DnsRecordState } from '../../src/domain/sending-domain.js';

const record = (value: string, status: DnsRecordState['status'] = 'verified'): DnsRecordState => ({ type: 'cname', host: 'track.shop.com', value, status, lastCheckedAt: null });
const domain = (r: DnsRecordState) => ({ linkHosts: { tracking: r, unsubscribe: record('x', 'pending') } });

describe('linkBaseUrl', () => {
  it('uses the verified link host whose CNAME names the publicUrl host (case and root dot aside)', () => {
    expect(linkBaseUrl('https://mta.example.org:8443/t/', domain(record('MTA.example.org.')), 'tracking')).toBe('https://track.shop.com:8443/t');
  });

  it('keeps publicUrl when the record was verified for another host (publicUrl changed since)', () => {
    expect(linkBaseUrl('https://mta.example.org', domain(record('127.0.0.1')), 'tracking')).toBe('https://mta.example.org');
  });

  it('keeps publicUrl while the record is not verified', () => {
    expect(linkBaseUrl('https://mta.example.org', domain(record('mta.example.org', 'failing')), 'tracking')).toBe('https://mta.example.org');
  });
});
