/**
 * The `_smtp._tls.<domain>` TXT record (RFC 8460 3): "v=TLSRPTv1; rua=mailto:tls@example.com,https://r.example/tlsrpt".
 *
 * RFC 8460 3: records that do not begin with "v=TLSRPTv1;" are discarded; if not exactly one
 * remains, the domain does not take reports. rua is required and is a comma-separated list of
 * mailto: and https: URIs (a comma or "!" inside a URI is percent-encoded, so splitting on ","
 * is exact). Unknown fields are ignored (tlsrpt-extension).
 */

export type RuaRecord = { ok: true; rua: string[] } | { ok: false; reason: string };

export function parseTlsRptRecords(records: readonly string[]): RuaRecord {
  const ours = records.filter((r) => /^v=TLSRPTv1[ \t]*;/.test(r));
  if (ours.length === 0) return { ok: false, reason: 'no record beginning with v=TLSRPTv1;' };
  if (ours.length > 1) return { ok: false, reason: `${ours.length} v=TLSRPTv1 records, not exactly one (RFC 8460 3)` };
  const fields = ours[0].split(';').map((f) => f.trim()).filter((f) => f !== '');
  const rua = fields.find((f) => /^rua[ \t]*=/.test(f));
  if (!rua) return { ok: false, reason: 'the record has no rua' };
  const uris = rua
    .slice(rua.indexOf('=') + 1)
    .split(',')
    .map((u) => u.trim())
    .filter((u) => /^(mailto|https):/i.test(u));
  if (uris.length === 0) return { ok: false, reason: 'rua names no mailto: or https: URI' };
  return { ok: true, rua: uris };
}
