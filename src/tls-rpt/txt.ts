/**
 * The `_smtp._tls.<domain>` TXT record (RFC 8460 3): "v=TLSRPTv1; rua=mailto:tls@example.com,https://r.example/tlsrpt".
 *
 * RFC 8460 3: records that do not begin with "v=TLSRPTv1;" are discarded; if not exactly one
 * remains, the domain does not take reports. rua is required and is a comma-separated list of
 * mailto: and https: URIs (a comma or "!" inside a URI is percent-encoded, so splitting on ","
 * is exact). Unknown fields are ignored (tlsrpt-extension).
 *
 * The record is the policy domain's to write, up to the 64 KiB of a DNS message: a rua of
 * thousands of URIs would have us send a report to each of them every day (mail we sign, to
 * addresses the domain picked). Only the first MAX_RUA_URIS distinct ones are kept, as DMARC
 * lets receivers limit its rua (RFC 7489 6.2: "MAY impose a limit ... at least two").
 */

export type RuaRecord = { ok: true; rua: string[] } | { ok: false; reason: string };

/** The most rua URIs a report goes to; real records name one or two. */
export const MAX_RUA_URIS = 5;

export function parseTlsRptRecords(records: readonly string[]): RuaRecord {
  const ours = records.filter((r) => /^v=TLSRPTv1[ \t]*;/.test(r));
  if (ours.length === 0) return { ok: false, reason: 'no record beginning with v=TLSRPTv1;' };
  if (ours.length > 1) return { ok: false, reason: `${ours.length} v=TLSRPTv1 records, not exactly one (RFC 8460 3)` };
  const fields = ours[0].split(';').map((f) => f.trim()).filter((f) => f !== '');
  const rua = fields.find((f) => /^rua[ \t]*=/.test(f));
  if (!rua) return { ok: false, reason: 'the record has no rua' };
  const uris = new Set<string>();
  for (const raw of rua.slice(rua.indexOf('=') + 1).split(',')) {
    const uri = raw.trim();
    if (/^(mailto|https):/i.test(uri)) uris.add(uri);
    if (uris.size === MAX_RUA_URIS) break;
  }
  if (uris.size === 0) return { ok: false, reason: 'rua names no mailto: or https: URI' };
  return { ok: true, rua: [...uris] };
}
