/** postrider store check|backup|copy-to-postgres */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/load.js';
import { checkStore, type StoreReport } from '../store/lmdb/check.js';
import type { DataFileInfo } from '../store/lmdb/data-file.js';
import { LmdbStore } from '../store/lmdb/engine.js';
import { parse, table, UsageError, type CommandIo } from './args.js';

const USAGE = `Usage:
  postrider store check
  postrider store backup DIR [--compact]
  postrider store copy-to-postgres [--url URL] [--schema NAME]

"check" reads the whole store (the data folder's db/data.mdb): meta pages, file size, every
database's every entry. It prints what it read and exits 0, or prints what is damaged and
exits 65. "backup" writes a consistent copy of the store as it is now to DIR/data.mdb (a new
or empty folder; compacted: free pages are left out) and checks the copy. Both are safe while the
daemon runs. To restore, see docs/operations.md, "Backup and restore". "copy-to-postgres" moves
the store into PostgreSQL for cluster mode (the daemon stopped): postrider store copy-to-postgres --help.
Options: --config PATH, --json, --help`;

export async function storeCommand(argv: string[], io: CommandIo): Promise<number> {
  // Its own options and usage (cli/store-copy.ts), loaded only when asked for: it pulls in both engines.
  if (argv[0] === 'copy-to-postgres') return (await import('./store-copy.js')).storeCopyCommand(argv.slice(1), io);
  const { values, positionals, help } = parse(argv, { config: { type: 'string' }, json: { type: 'boolean' }, compact: { type: 'boolean' } }, USAGE, { check: 1, backup: 2 });
  const [sub, dir] = positionals;
  if (help || !sub) {
    io.out(USAGE);
    return help ? 0 : 2;
  }
  if (sub !== 'check' && sub !== 'backup') throw new UsageError(`unknown subcommand "${sub}"`, USAGE);
  const { dataDir } = loadConfig({ configPath: values.config, env: io.env });
  if (sub === 'check') {
    const report = await checkStore(dataDir);
    io.out(values.json ? JSON.stringify(report) : describe(report));
    return 0;
  }
  if (!dir) throw new UsageError('DIR is required', USAGE);
  const target = path.resolve(dir);
  if (fs.existsSync(target) && !fs.statSync(target).isDirectory()) throw new UsageError(`${target} is not a folder; give a new or empty folder`, USAGE);
  if (fs.existsSync(path.join(target, 'data.mdb'))) throw new UsageError(`${path.join(target, 'data.mdb')} exists already; give a new or empty folder`, USAGE);
  const store = new LmdbStore({ dataDir, readOnly: true });
  await store.start();
  let copy: { file: string; info: DataFileInfo; removed: string[] };
  try {
    // Always compacted (--compact is still accepted): the compacting copy writes its meta pages
    // from its own read transaction, so it is consistent by construction. The plain copy takes
    // the live meta pages, and under write load (lmdb-js commits with overlapping syncs) it once
    // named a last page beyond the pages it had copied: a truncated backup (store-damage test).
    // A large store takes a while: where the copy is, once a second (stderr).
    const report = (written: number, inUse: number) => io.err(`backing up: ${mib(written)} written, of at most ${mib(inUse)}`);
    copy = await store.backup(target, true, { report, everyMs: PROGRESS_EVERY_MS });
  } catch (err) {
    // A full disk, a quota, an unreadable store: one line, and nothing in DIR that looks like a backup.
    io.err(`postrider: ${(err as Error).message}`);
    return 74; // EX_IOERR (sysexits.h)
  } finally {
    await store.stop();
  }
  const { file, info, removed } = copy;
  for (const folder of removed) io.err(`removed ${folder}, left by a backup that was killed`);
  if (values.json) io.out(JSON.stringify({ file, ...info, removed }));
  else io.out(`backup written to ${file}: ${info.sizeBytes} bytes, transaction ${info.txnId}`);
  return 0;
}

const PROGRESS_EVERY_MS = 1_000;

const mib = (bytes: number): string => `${(bytes / 1048576).toLocaleString('en-US', { maximumFractionDigits: 1 })} MiB`;

function describe(r: StoreReport): string {
  const head =
    `store ${r.file}: ok\n` +
    `created ${r.createdAt ?? 'before this postrider version'}; ${r.data.sizeBytes} bytes, page size ${r.data.pageSize}, ` +
    `last page ${r.data.lastPage}, transaction ${r.data.txnId}`;
  return `${head}\n${table(r.databases, ['name', 'entries'])}`;
}
