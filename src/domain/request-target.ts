/**
 * Longest request target (path and query) the HTTP listener serves, 414 beyond
 * (http/client-compat.ts); RFC 9110 4.1 recommends at least 8,000. Links written into mail
 * (workers/engagement.ts) must fit it, or a recipient's click would be that 414.
 */
export const MAX_URL_LENGTH = 16 * 1024;
