/**
 * A warning that one cause can raise many times a second: while PostgreSQL is out of reach,
 * every coordination statement of a node fails (a NOTIFY per wake-up, a rate call per send, the
 * timers' renewals), about 20 lines a second per node in the cluster test's 4-second outage,
 * so an outage of minutes would bury the log. Written once per window; the next line written
 * says how many were left out since the one before.
 */
export type RepeatGate = (write: (leftOut: number) => void) => void;

export function oncePerWindow(windowMs: number, now: () => number = () => performance.now()): RepeatGate {
  let lastAt = -Infinity;
  let leftOut = 0;
  return (write) => {
    const t = now();
    if (t - lastAt < windowMs) {
      leftOut++;
      return;
    }
    lastAt = t;
    const n = leftOut;
    leftOut = 0;
    write(n);
  };
}
