/**
 * The declared type of an attachment: type/subtype with optional parameters (RFC 2045 5.1), as
 * libraries give it (mime-types' contentType('a.txt') is "text/plain; charset=utf-8"). Its own
 * module, free of imports, because the route schemas and the error wording read the pattern
 * while their modules load.
 */

/** RFC 9110 5.6.2 token: the name and the plain value of a parameter. */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";

/** Parameter values are tokens or quoted strings without control characters: the type cannot end its header field. */
export const MEDIA_TYPE_PATTERN =
  '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+(?:[ \\t]*;[ \\t]*' + TOKEN + '=(?:' + TOKEN + '|"[^"\\\\\\u0000-\\u001f\\u007f]*"))*$';

/** The type without its parameters, lower case: what blocked types are checked against. */
export function mediaTypeEssence(value: string): string {
  return value.split(';')[0]!.trim().toLowerCase();
}
