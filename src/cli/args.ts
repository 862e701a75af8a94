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

/**
 * How many positional arguments a command takes: a number, or one per subcommand (the first
 * positional, counted). A subcommand not listed is left to the command to refuse.
 */
export type Arity = number | Readonly<Record<string, number>>;

/**
 * Parses argv for one command; --help and -h are understood by every command. A positional
 * beyond the command's arity is refused: `postrider serve postrider.jsonc` (--config forgotten)
 * would otherwise run on the defaults, with a new store in ./data.
 */
export function parse<O extends Options>(argv: string[], options: O, usage: string, arity: Arity) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message, usage);
  }
  const help = Boolean((parsed.values as Record<string, unknown>).help);
  const [sub] = parsed.positionals;
  const max = typeof arity === 'number' ? arity : sub !== undefined && Object.hasOwn(arity, sub) ? arity[sub] : undefined;
  if (!help && max !== undefined && parsed.positionals.length > max) {
    const extra = parsed.positionals[max];
    const hint = extra.endsWith('.json') || extra.endsWith('.jsonc') ? ' (a configuration file is given with --config PATH)' : '';
    throw new UsageError(`unexpected argument "${extra}"${hint}`, usage);
  }
  return { ...parsed, help };
}

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = [columns, ...rows.map((r) => columns.map((c) => String(r[c] ?? '')))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells.map((row) => row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}
