/**
 * The source of the rate bridge's worker thread (bridge.ts): one PostgreSQL connection that
 * runs the statements the main thread sends, in the order sent, and answers the ones the main
 * thread waits for. Kept as source text run with `eval` rather than a module file, so that the
 * same code runs from dist/ and from the TypeScript sources under the tests (a worker file would
 * need a build or a loader); it is plain JavaScript with no import of ours, only the driver,
 * whose file URL the main thread resolves and passes in.
 *
 * Protocol (workerData: port, flag, driver, url, settings, backoffMaxS):
 *  - in: { id, text, params, sync } runs `text` with bound `params`; { close: true } ends the
 *    connection after the statements already sent.
 *  - out: { id, rows } for a sync statement, { id, error } for any that failed, { ready } once
 *    the driver is loaded (false: it could not be). Every message out is followed by an increment of `flag` and Atomics.notify,
 *    which wakes the main thread blocked in Atomics.wait.
 */
export const BRIDGE_WORKER_SOURCE = `
'use strict';
const { workerData } = require('node:worker_threads');
const { port, flag, driver, url, settings, backoffMaxS } = workerData;
const text = (err) => String((err && err.message) || err);
function send(message) {
  port.postMessage(message);
  Atomics.add(flag, 0, 1);
  Atomics.notify(flag, 0);
}
// The pool of one connection (postgres.js connects at the first statement and again after a
// drop). Each message chains on it in arrival order, so statements are queued in that order.
const opened = import(driver).then(({ default: postgres }) =>
  postgres(url, {
    max: 1,
    onnotice: false,
    connect_timeout: 10,
    // database-unavailable.ts reconnectBackoff: postgres.js's curve, capped at backoffMaxS.
    backoff: (retries) => (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, backoffMaxS),
    connection: settings,
  }),
);
port.on('message', (m) => {
  opened.then(
    (sql) => {
      if (m.close) return sql.end({ timeout: 5 }).finally(() => port.close());
      return sql.unsafe(m.text, m.params).then(
        (rows) => m.sync && send({ id: m.id, rows: Array.from(rows) }),
        (err) => send({ id: m.id, error: text(err) }),
      );
    },
    (err) => (m.close ? port.close() : send({ id: m.id, error: text(err) })),
  );
});
// Ready once the driver is loaded; the connection is opened at once (a statement waits behind
// it), so that the first call does not pay for it, and a failure to connect is reported.
opened.then(
  (sql) => {
    send({ ready: true });
    sql\`SELECT 1\`.catch((err) => send({ error: text(err) }));
  },
  (err) => send({ ready: false, error: text(err) }),
);
`;
