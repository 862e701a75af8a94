/**
 * The worst-case check (issue 29; `npm run test:worst-case`, run by CI): every parser of untrusted
 * input (HTTP bodies, SMTP commands and replies, message headers and MIME, DSN and ARF reports, DNS
 * answers, MTA-STS policies) is run on a generated worst case as large as the limits in front of it
 * let through, and must finish within a time budget. A parser that is linear in its input does so
 * with a wide margin (tens of milliseconds for megabytes); one that backtracks or rescans (a
 * quadratic regex, a string rebuilt per character) takes seconds to hours at those sizes, so the
 * check fails by orders of magnitude, not by a few percent, and load on the machine does not flip it.
 *
 * The cases live in test/worst-case/*.worst.ts, one file per area; the unit tests beside the parsers
 * check what they return for the same inputs at small sizes.
 */
import { performance } from 'node:perf_hooks';
import { expect } from 'vitest';

/**
 * Most a single parse may hold the event loop in these checks (ms). The issue's goal is "a few tens
 * of milliseconds"; the budget leaves room for a loaded CI machine and a cold JIT, and is still
 * thousands of times less than a superlinear parser needs at the sizes used.
 */
export const WORST_CASE_BUDGET_MS = 250;

/** Runs `parse` once on its worst case and fails when it took longer than `budgetMs`. Returns its result. */
export function withinBudget<T>(what: string, parse: () => T, budgetMs = WORST_CASE_BUDGET_MS): T {
  const started = performance.now();
  const result = parse();
  const ms = performance.now() - started;
  expect(ms, `${what} took ${ms.toFixed(1)} ms on its worst case (budget ${budgetMs} ms)`).toBeLessThan(budgetMs);
  return result;
}

/** Async form of withinBudget, for parsers that return a promise (streams, workers). */
export async function withinBudgetAsync<T>(what: string, parse: () => Promise<T>, budgetMs = WORST_CASE_BUDGET_MS): Promise<T> {
  const started = performance.now();
  const result = await parse();
  const ms = performance.now() - started;
  expect(ms, `${what} took ${ms.toFixed(1)} ms on its worst case (budget ${budgetMs} ms)`).toBeLessThan(budgetMs);
  return result;
}

/** `unit` repeated until the text is `bytes` long (cut to exactly that length). */
export function repeatTo(unit: string, bytes: number): string {
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

export const MiB = 1024 * 1024;
