/**
 * Whether a message is cheap to read with mailparser on the main thread (where the SMTP listeners,
 * the HTTP API and the scheduler run): mailparser's time grows with the MIME parts, about 0.2-0.3
 * ms each, so a 10 KB message of 990 one-line parts held the thread 180-280 ms and one of 495
 * parts 50-150 ms, where a message of a few parts takes about 1 ms. Its delimiter lines
 * (RFC 2046 5.1.1: "--" and the boundary at the start of a line) are counted, only up to the limit.
 */
export const MAIN_THREAD_MAX_PARTS = 20;

/** At most MAIN_THREAD_MAX_PARTS lines of `raw` start with "--" (after the first one). */
export function fewMimeParts(raw: Buffer): boolean {
  let lines = 0;
  for (let at = raw.indexOf('\n--'); at !== -1; at = raw.indexOf('\n--', at + 3)) {
    if (++lines > MAIN_THREAD_MAX_PARTS) return false;
  }
  return true;
}
