/**
 * What the fuzzers share: the target daemon's fixtures (FuzzContext), the per-run statistics,
 * hostile string values and byte-level text mutations.
 *
 * The fuzzers (http.ts, raw-http.ts, smtp.ts beside this file) serve both the quick run in
 * `npm test` (test/e2e/security-fuzz.test.ts) and the long one in `npm run test:soak`
 * (test/soak/fuzz.soak.ts). Cases run in batches (one fast-check run = one batch sent
 * concurrently), so a failure is shrunk to a small batch and reported with fast-check's seed for
 * replay (FUZZ_SEED).
 */
import fc from 'fast-check';
import type { ChildDaemon } from '../child-daemon.js';

export interface FuzzContext {
  d: ChildDaemon;
  accountKey: string;
  channelKey: string;
  /** A key of another account. */
  foreignKey: string;
  channelId: string;
  foreignChannelId: string;
  domain: string;
  domainId: string;
  messageId: string;
  webhookId: string;
}

export interface FuzzStats {
  cases: number;
  byStatus: Record<string, number>;
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\r\n',
  '\n.\n',
  '\u0000',
  '\uFEFF',
  '\uD800',
  '%00',
  '%E0%A4%A',
  '%',
  '%0d%0aX-Injected: 1',
  '../../../../etc/passwd',
  '{{constructor.constructor}}',
  '{{#each this}}{{/each}}',
  '{{> partial}}',
  '{{{{raw}}}}',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  'null',
  '-1',
  '1e309',
  'NaN',
  '0x10',
  'a'.repeat(300),
  'é'.repeat(200),
  '😀'.repeat(100),
  'x'.repeat(70_000),
  '=?utf-8?B?AAAA?=',
  'user@example.com',
  '"quoted"@example.com',
  'a@[127.0.0.1]',
  '@a,@b:c@d',
  'user%relay@example.com',
  'bang!path@example.com',
  'http://127.0.0.1:9/',
  'javascript:alert(1)',
  '2024-02-30T25:61:00Z',
  '00000000-0000-0000-0000-000000000000',
  'ZZZZZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZZZZZZZZZ',
];

export const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.emailAddress() },
);

/** Breaks JSON text: truncation, insertion, deletion, byte flips. */
export const textMutation = fc.record({ at: fc.nat(), kind: fc.constantFrom('truncate', 'insert', 'delete', 'flip', 'dup'), text: fc.string({ unit: 'binary', maxLength: 6 }), len: fc.integer({ min: 1, max: 8 }) });

export function mutateText(s: string, muts: Array<{ at: number; kind: string; text: string; len: number }>): string {
  for (const m of muts) {
    const at = s.length ? m.at % (s.length + 1) : 0;
    if (m.kind === 'truncate') s = s.slice(0, at);
    else if (m.kind === 'insert') s = s.slice(0, at) + m.text + s.slice(at);
    else if (m.kind === 'delete') s = s.slice(0, at) + s.slice(at + m.len);
    else if (m.kind === 'flip') s = s.slice(0, at) + String.fromCharCode((s.charCodeAt(at) || 0) ^ 0x20) + s.slice(at + 1);
    else s = s.slice(0, at) + s.slice(at, at + m.len).repeat(3) + s.slice(at + m.len);
  }
  return s;
}
