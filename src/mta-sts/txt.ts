/**
 * The `_mta-sts.<domain>` TXT record (RFC 8461 3.1): "v=STSv1; id=20240101T000000;". It says
 * that the domain has a policy and which version of it (the id), so a cached policy with the
 * same id need not be fetched again.
 *
 * The record comes from the recipient domain's DNS, up to the 64 KiB a DNS message can carry,
 * so it is read in one linear pass: split on ";", each field trimmed by index (trimBlanks) and
 * checked by an anchored regex with no two ways to match a character. A record longer than
 * MAX_RECORD_LENGTH is not read at all.
 */
import { trimBlanks } from '../domain/white-space.js';

/**
 * RFC 8461 sets no length; a record is "v=STSv1; id=" and at most 32 characters, plus whatever
 * extensions a future revision adds. Far longer is an attack or an accident, and is no policy.
 */
export const MAX_RECORD_LENGTH = 2048;

// RFC 8461 3.1: sts-id = %s"id=" 1*32(ALPHA / DIGIT)
const ID_FIELD = /^id=([A-Za-z0-9]{1,32})$/;
// sts-ext-name = (ALPHA / DIGIT) *31(ALPHA / DIGIT / "_" / "-" / "."); sts-ext-value =
// 1*(%x21-3A / %x3C / %x3E-7E): printable, without "=", ";" and white space.
const EXT_FIELD = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}=[\x21-\x3a\x3c\x3e-\x7e]+$/;
// Records that do not begin with "v=STSv1;" are other records (sts-field-delim allows WSP before ";").
const STS_VERSION = /^v=STSv1[ \t]*;/;

/**
 * The policy id of the domain's records, or null when the domain announces no policy. The
 * resolver hands each record with its character-strings already joined (RFC 8461 3.1: "the
 * strings are concatenated"). Records that do not begin with "v=STSv1;" are other records
 * and are skipped; if not exactly one remains, or it is malformed, the domain has no available
 * policy (RFC 8461 3.1: "senders MUST assume the recipient domain does not have an available
 * MTA-STS policy").
 */
export function stsRecordId(records: readonly string[]): string | null {
  let sts: string | undefined;
  for (const record of records) {
    if (!STS_VERSION.test(record)) continue;
    if (sts !== undefined) return null;
    sts = record;
  }
  return sts === undefined || sts.length > MAX_RECORD_LENGTH ? null : parseRecord(sts);
}

/**
 * sts-text-record = sts-version 1*(sts-field-delim sts-field) [sts-field-delim], with
 * sts-field-delim = *WSP ";" *WSP. The id must be there; of two ids the first counts. An
 * extension (sts-extension) must be well formed but is otherwise ignored.
 */
function parseRecord(record: string): string | null {
  const fields = record.split(';').map(trimBlanks);
  // The version, then at least one field; an empty last one is the optional trailing ";".
  if (fields[fields.length - 1] === '') fields.pop();
  if (fields.length < 2) return null;
  let id: string | null = null;
  for (let i = 1; i < fields.length; i++) {
    const m = ID_FIELD.exec(fields[i]);
    if (m) id ??= m[1];
    else if (!EXT_FIELD.test(fields[i])) return null;
  }
  return id;
}
