/** Small helpers shared by the CLI commands: option parsing with --help, and usage errors. */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {
  constructor(message: string, readonly usage: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface CommandIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses argv for one command; --help and -h are understood by every command. */
export function parse<O extends Options>(argv: string[], options: O, usage: string) {
  try {
    const parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
    return { ...parsed, help: Boolean((parsed.values as Record<string, unknown>).help) };
  } catch (err) {
    throw new UsageError((err as Error).message, usage);
  }
}

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = [columns, ...rows.map((r) => columns.map((c) => String(r[c] ?? '')))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells.map((row) => row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}
