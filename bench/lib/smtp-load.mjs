/**
 * An authenticating SMTP submission load: nodemailer's pooled transport with `connections`
 * connections (STARTTLS required, certificate not checked, AUTH PLAIN), `connections` senders
 * each sending its next message as soon as the previous one got its 250. The same client,
 * message and concurrency are used against postrider and Postfix.
 */
import nodemailer from 'nodemailer';
import { percentile } from './report.mjs';

/**
 * `to`: the envelope recipient, or a function of the message's number (0, 1, …) giving it, to
 * spread the recipients over domains. `probe` (default true): one untimed message first; false
 * for a run timed from its first message on (the pool then opens its connections in the window).
 * `pool` (default true): false opens a connection of its own for every message (TCP, greeting,
 * EHLO, STARTTLS, AUTH, the message, QUIT), as an application that keeps no connection does.
 */
export async function submissionLoad({ port, user, pass, count, connections, raw, from, to, onProgress, probe = true, pool = true }) {
  const rcpt = typeof to === 'function' ? to : () => to;
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    auth: { user, pass },
    ...(pool ? { pool: true, maxConnections: connections, maxMessages: Infinity } : {}),
    name: 'bench-client.test',
  });
  // One message first: opens a connection, authenticates, proves the setup (not timed).
  if (probe) await transport.sendMail({ envelope: { from, to: [rcpt(count)] }, raw });
  const latencies = [];
  let next = 0;
  let failed = 0;
  let firstError;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const sender = async () => {
    while (next < count) {
      const i = next++;
      const s = performance.now();
      try {
        await transport.sendMail({ envelope: { from, to: [rcpt(i)] }, raw });
        latencies.push(performance.now() - s);
      } catch (err) {
        failed++;
        firstError ??= err;
      }
      if (onProgress && (latencies.length + failed) % 1000 === 0) onProgress(latencies.length + failed);
    }
  };
  await Promise.all(Array.from({ length: connections }, sender));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  transport.close();
  latencies.sort((a, b) => a - b);
  return {
    seconds,
    sent: latencies.length,
    failed,
    firstError: firstError ? String(firstError.response ?? firstError.message) : undefined,
    rate: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    // The load generator's own CPU (this process: nodemailer, its TLS, the bench's code), apart from the server's.
    clientCpuMs: latencies.length > 0 ? (cpu.user + cpu.system) / 1000 / latencies.length : null,
    clientBusy: (cpu.user + cpu.system) / 1e6 / seconds,
  };
}
