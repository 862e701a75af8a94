/**
 * PostgreSQL's text cannot hold U+0000 (SQLSTATE 22021, "invalid byte sequence for encoding
 * UTF8: 0x00"), and a client can put one into almost any string: a JSON field ("\u0000"), a path
 * parameter (%00), a header. Both users of PostgreSQL send every string parameter through this
 * replacement, U+0000 to U+FFFD (the replacement character): the store's client
 * (store/postgres/client.ts) and the cluster coordination's pools and rate bridge
 * (coordination/postgres/connection.ts, bridge.ts). Here, as one pure rule, because neither
 * may import the other.
 *
 * A value is only ever compared with values that went through the same replacement, so lookups
 * stay consistent; two strings that differ only by NUL against U+FFFD become one. For a limit's
 * key that errs on the safe side (they share a budget); for stored text the character was never
 * storable anyway.
 */
export function textWithoutNul(value: unknown): string {
  return String(value).replace(/\u0000/g, '\ufffd');
}
