/**
 * Broadcast expansion: one POST /send/broadcast with K entries (live channel, verified RSA-2048
 * domain, delivery disabled), then the time until the background expander has turned every
 * entry into a committed message (GET /metrics postrider_messages_accepted_total). With
 * --profile (the default) a second run under `node --cpu-prof` shows where the worker thread
 * spends its time. No peer: Postfix has no templates or broadcasts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDns } from './lib/dns.mjs';
import { FROM } from './lib/message.mjs';
import { publishSinkDomains, setupSender, startPostrider, expectStatus } from './lib/postrider.mjs';
import { summarizeDir } from './lib/profile.mjs';
import { fmt, table } from './lib/report.mjs';

export const meta = {
  name: 'broadcast',
  heading: 'Broadcast expansion (bench/broadcast.mjs)',
  needsPostfix: false,
  options: { entries: 2000, profile: true },
  usage: '--entries=2000 (at most limits.broadcastMessages, 10,000), --profile=true (a second run under node --cpu-prof)',
};

const TEMPLATE = {
  subject: 'Your {{month}} statement, {{name}}',
  html: '<html><body><h1>Hello {{name}}</h1><p>Your balance on {{date}} is <b>{{balance}}</b>.</p>{{#each items}}<p>{{this.label}}: {{this.amount}}</p>{{/each}}<p>Thank you for banking with us.</p></body></html>',
  text: 'Hello {{name}},\nyour balance on {{date}} is {{balance}}.\n{{#each items}}{{this.label}}: {{this.amount}}\n{{/each}}Thank you for banking with us.\n',
};

/** What the worker thread's profile is broken down into (inclusive time unless `self`). */
const PARTS = [
  ['DKIM: private key parsed from PEM (crypto.createPrivateKey)', /^createPrivateKey /],
  ['DKIM: RSA-2048 private-key operation (crypto.sign)', /^signOneShot /],
  ['DKIM: mailauth canonicalization, hashing, header (self time in mailauth)', /mailauth\//, 'self'],
  ['Handlebars: compiling templates', /^compileInput handlebars/],
  ['Handlebars: whole render incl. compile', /^render dist\/workers\/render\.js:/],
  ['MIME composition (nodemailer, synchronous part)', /^composeMessage /],
  ['garbage collection', /^\(garbage collector\)/, 'self'],
  ['idle: waiting for the next task (piscina Atomics.wait)', /^atomicsWaitLoop /],
];

async function expandOnce({ entries, nodeArgs = [] }, progress) {
  const dns = await startDns();
  const domains = publishSinkDomains(dns, 10);
  let p;
  try {
    p = await startPostrider({ POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_ENABLED: 'false' }, { nodeArgs });
    const { channelId } = await setupSender(p, dns);
    const messages = Array.from({ length: entries }, (_, i) => ({
      to: [{ email: `user${i}@${domains[i % domains.length]}`, name: `User ${i}` }],
      data: { name: `User ${i}`, balance: `${(i * 13.37).toFixed(2)} EUR`, items: [{ label: 'Fees', amount: '0.00' }, { label: 'Interest', amount: '1.20' }] },
    }));
    const body = { from: FROM, template: { ...TEMPLATE, data: { month: 'March', date: '31 March' } }, messages, tags: ['statement'] };
    progress(`POST /send/broadcast with ${entries} entries${nodeArgs.length ? ' (daemon under --cpu-prof)' : ''}`);
    const t0 = performance.now();
    expectStatus(await p.api('POST', '/send/broadcast', body, { 'x-service-channel-id': channelId }), 200, 'POST /send/broadcast');
    const acceptedS = (performance.now() - t0) / 1000;
    const deadline = Date.now() + 300_000;
    let done = 0;
    while ((done = await p.metric('postrider_messages_accepted_total')) < entries) {
      if (Date.now() > deadline) throw new Error(`broadcast: ${done} of ${entries} messages after 300 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - t0) / 1000;
    progress(`expanded ${entries} entries in ${seconds.toFixed(1)} s (${fmt(entries / seconds)} messages/s; 200 after ${acceptedS.toFixed(2)} s)`);
    return { acceptedS, seconds };
  } finally {
    await p?.stop(); // the profiles are written when the daemon exits
    await dns.close();
  }
}

function breakdown(profDir) {
  const profiles = summarizeDir(profDir);
  const worker = profiles.find((s) => s.inclusive.some(([k]) => /^atomicsWaitLoop /.test(k)));
  if (!worker) return null;
  const share = (re, kind) => {
    const list = kind === 'self' ? worker.self : worker.inclusive;
    const ms = kind === 'self' ? list.filter(([k]) => re.test(k)).reduce((a, [, v]) => a + v, 0) : (list.find(([k]) => re.test(k))?.[1] ?? 0);
    return ms / worker.totalMs;
  };
  return { totalMs: worker.totalMs, rows: PARTS.map(([label, re, kind]) => [label, `${(share(re, kind) * 100).toFixed(0)}%`]), share };
}

export async function run({ entries, profile }, { progress }) {
  const r = await expandOnce({ entries }, progress);
  let prof = null;
  if (profile) {
    const profDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-prof-'));
    try {
      await expandOnce({ entries, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] }, progress);
      prof = breakdown(profDir);
    } finally {
      fs.rmSync(profDir, { recursive: true, force: true });
    }
  }
  const lines = [
    `One broadcast of ${fmt(entries)} entries (Handlebars subject, html with an {{#each}}, text; 10 recipient domains), ` +
      'live channel with a verified RSA-2048 DKIM domain, delivery disabled. The expander works 100 entries at a time: ' +
      'render + compose + sign each in the worker pool (one thread on two cores), then one commit per batch.',
    '',
    table(['entries', '200 after s', 'all committed after s', 'messages/s'], [[fmt(entries), r.acceptedS.toFixed(2), r.seconds.toFixed(1), fmt(entries / r.seconds)]]),
  ];
  if (prof) {
    lines.push('', `Where the worker thread's time went (second run, daemon under \`node --cpu-prof\`, ${fmt(prof.totalMs)} ms of samples; ` +
      'inclusive shares overlap, e.g. compiling is part of rendering):', '', table(['part', 'share of the worker thread'], prof.rows));
  }
  let reading = `Expansion ran at ${fmt(entries / r.seconds)} messages/s.`;
  if (prof) {
    const pct = (i) => Math.round(prof.share(PARTS[i][1], PARTS[i][2]) * 100);
    const costly = [0, 1, 3, 5].filter((i) => pct(i) >= 5).sort((x, y) => pct(y) - pct(x));
    const reused = [pct(0) < 2 ? 'the parsed DKIM key' : null, pct(3) < 2 ? 'the compiled templates' : null].filter(Boolean);
    reading +=
      ` The worker thread's largest costs: ${costly.map((i) => `${PARTS[i][0].replace(/ \(.*\)$/, '')} ${pct(i)}%`).join('; ')}` +
      (reused.length ? ` (${reused.join(' and ')} ${reused.length > 1 ? 'are' : 'is'} reused from one message to the next)` : '') +
      `. It waits ${pct(7)}% of the time: each batch of 100 is committed (fsync) before the next one is handed to ` +
      'the pool, and every task waits for the main thread to hand it over; building the next batch while the ' +
      'previous one commits would use that time. On two cores the default pool has one worker thread, so ' +
      'expansion uses the second core only for what the main thread does.';
  } else {
    reading += ' Run with --profile=true to see where the time goes.';
  }
  return { text: lines.join('\n'), reading, summary: [{ measure: `broadcast expansion, ${fmt(entries)} entries (messages/s)`, postrider: fmt(entries / r.seconds), postfix: 'n/a (no templates)', ratio: 'n/a' }] };
}
