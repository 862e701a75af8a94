/**
 * The `_mta-sts.<domain>` TXT record (RFC 8461 3.1): "v=STSv1; id=20240101T000000;". It says
 * that the domain has a policy and which version of it (the id), so a cached policy with the
 * same id need not be fetched again.
 */

/**
 * The policy id of the domain's records, or null when the domain announces no policy. The
 * resolver hands each record with its character-strings already joined (RFC 8461 3.1: "the
 * strings are concatenated"). Records that do not begin with "v=STSv1;" are other records
 * and are skipped; if not exactly one remains, or it is malformed, the domain has no available
 * policy (RFC 8461 3.1).
 */
export function stsRecordId(records: readonly string[]): string | null {
  const sts = records.filter((r) => /^v=STSv1[ \t]*;/.test(r));
  if (sts.length !== 1) return null;
  return parseRecord(sts[0]);
}

/**
 * sts-text-record = sts-version 1*(sts-field-delim sts-field) [sts-field-delim], fields
 * "name=value" split by ";" with white space around it; the id is 1 to 32 letters and digits
 * and must be there. Unknown fields are ignored (sts-ext); of two ids the first counts.
 */
function parseRecord(record: string): string | null {
  const fields = record.split(';').map((f) => f.replace(/^[ \t]+|[ \t]+$/g, ''));
  // The version, then at least one field; an empty last one is the optional trailing ";".
  if (fields.length < 2) return null;
  if (fields[fields.length - 1] === '') fields.pop();
  let id: string | null = null;
  for (const field of fields.slice(1)) {
    const eq = field.indexOf('=');
    if (eq <= 0) return null;
    const name = field.slice(0, eq);
    const value = field.slice(eq + 1);
    if (name === 'id') {
      if (!/^[A-Za-z0-9]{1,32}$/.test(value)) return null;
      id ??= value;
    }
  }
  return id;
}
