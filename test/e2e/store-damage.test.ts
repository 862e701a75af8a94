/**
 * A store that went missing or is damaged stops the daemon with one line naming the file and
 * what to do (exit 65), instead of a silent fresh install (new account, new key, all data gone)
 * or a death by SIGBUS; a store whose reads fail at run time makes /ready answer 503;
 * `postrider store check` reads it all; a backup taken under load restores.
 *
 * One daemon makes a store (beforeAll); each case runs on its own copy of that data folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { runCli } from '../support/cli.js';
import { startWriteLoad } from '../support/write-load.js';

const PAGE = 4096;

let tmp: string;
let golden: string;
let goldenKey: string;
const daemons: ChildDaemon[] = [];

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-store-'));
  golden = path.join(tmp, 'golden');
  const d = new ChildDaemon({ dataDir: golden });
  await d.start();
  const load = await startWriteLoad(d, 4);
  await load.acceptedMore(40);
  await load.stop();
  goldenKey = d.apiKey;
  expect(await d.stop()).toEqual({ code: 0, signal: null });
}, 60_000);

afterAll(async () => {
  await Promise.all(daemons.map((d) => d.close()));
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A copy of the golden data folder, damaged by `harm` (given the path of db/data.mdb). */
function copyWith(name: string, harm: (dataFile: string) => void): string {
  const dir = path.join(tmp, name);
  fs.cpSync(golden, dir, { recursive: true });
  harm(path.join(dir, 'db', 'data.mdb'));
  return dir;
}

/** Overwrites every page after the two meta pages with zeros (the file keeps its size). */
function zeroDataPages(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    const size = fs.fstatSync(fd).size;
    fs.writeSync(fd, Buffer.alloc(size - 2 * PAGE), 0, size - 2 * PAGE, 2 * PAGE);
  } finally {
    fs.closeSync(fd);
  }
}

/** Starts a daemon that must refuse: resolves with its exit and its stderr lines. */
async function refusedStart(dataDir: string): Promise<{ exit: ChildDaemon['exitStatus']; lines: string[] }> {
  const d = new ChildDaemon({ dataDir });
  daemons.push(d);
  await expect(d.start()).rejects.toThrow(/exited/);
  return { exit: d.exitStatus, lines: d.stderr.trim().split('\n') };
}

describe('a missing or damaged store', () => {
  it('is refused when db/data.mdb was deleted: one line, exit 65, no new account or key', async () => {
    const dir = copyWith('deleted', (f) => fs.rmSync(f));
    const { exit, lines } = await refusedStart(dir);

    expect(exit).toEqual({ code: 65, signal: null });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^postrider: the data folder ${dir} has held a store since \\S+, but ${dir}/db/data.mdb is missing;`));
    expect(lines[0]).toContain('Backup and restore');
    expect(fs.existsSync(path.join(dir, 'db', 'data.mdb'))).toBe(false);
    expect(fs.readFileSync(path.join(dir, 'initial-api-key'), 'utf8').trim()).toBe(goldenKey);
  }, 30_000);

  it('is refused when db/data.mdb was truncated to 0 bytes', async () => {
    const dir = copyWith('emptied', (f) => fs.truncateSync(f, 0));
    const { exit, lines } = await refusedStart(dir);

    expect(exit).toEqual({ code: 65, signal: null });
    expect(lines).toEqual([expect.stringContaining(`${dir}/db/data.mdb is empty (0 bytes); postrider will not start a new, empty store over it`)]);
    expect(fs.statSync(path.join(dir, 'db', 'data.mdb')).size).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'initial-api-key'), 'utf8').trim()).toBe(goldenKey);
  }, 30_000);

  it('is refused with one line, not a SIGBUS, when data.mdb was truncated', async () => {
    const dir = copyWith('truncated', (f) => fs.truncateSync(f, Math.floor(fs.statSync(f).size / PAGE / 2) * PAGE));
    const { exit, lines } = await refusedStart(dir);

    expect(exit).toEqual({ code: 65, signal: null });
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^postrider: the store ${dir}/db/data.mdb is damaged: .*\\(truncated\\)\\. Stop postrider and restore db/ from a backup`))]);
  }, 30_000);

  it('is refused with one line when its pages were overwritten', async () => {
    const dir = copyWith('overwritten', zeroDataPages);
    const { exit, lines } = await refusedStart(dir);

    expect(exit).toEqual({ code: 65, signal: null });
    // LMDB itself may print a line of its own on stderr ("index points to a 00 page") first.
    expect(lines.filter((l) => l.startsWith('postrider:'))).toEqual([expect.stringContaining(`the store ${dir}/db/data.mdb is damaged: MDB_CORRUPTED`)]);
    const check = await runCli(['store', 'check'], { POSTRIDER_DATA_DIR: dir });
    expect(check.code).toBe(65);
    expect(check.stderr).toContain(`the store ${dir}/db/data.mdb is damaged`);
  }, 30_000);

  it('makes /ready answer 503 once reads of the store fail while the daemon runs', async () => {
    const d = new ChildDaemon({ dataDir: copyWith('damaged-later', () => undefined) });
    daemons.push(d);
    await d.start();
    zeroDataPages(path.join(d.dataDir, 'db', 'data.mdb'));

    const res = await fetch(`${d.url}/ready`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'not_ready', notReady: ['store'] });
  }, 30_000);
});

describe('postrider store check and backup', () => {
  it('check reads every database while the daemon runs', async () => {
    const d = new ChildDaemon({ dataDir: copyWith('checked', () => undefined) });
    daemons.push(d);
    await d.start();
    const check = await runCli(['store', 'check', '--json'], { POSTRIDER_DATA_DIR: d.dataDir });

    expect(check.code, check.stderr).toBe(0);
    const report = JSON.parse(check.stdout);
    expect(report.file).toBe(path.join(d.dataDir, 'db', 'data.mdb'));
    expect(report.databases.find((db: { name: string }) => db.name === 'messages').entries).toBeGreaterThanOrEqual(40);
  }, 30_000);

  it('takes a consistent backup under write load that restores every message acknowledged before it', async () => {
    const d = new ChildDaemon({ dataDir: copyWith('backed-up', () => undefined) });
    daemons.push(d);
    await d.start();
    const load = await startWriteLoad(d, 4);
    await load.acceptedMore(20);
    const before = [...load.accepted];
    const backupDir = path.join(tmp, 'backup');
    const backup = await runCli(['store', 'backup', backupDir], { POSTRIDER_DATA_DIR: d.dataDir });
    await load.stop();
    expect(backup.code, backup.stderr).toBe(0);
    expect(backup.stdout).toContain(`backup written to ${backupDir}/data.mdb`);
    expect(fs.statSync(path.join(backupDir, 'data.mdb')).mode & 0o777).toBe(0o600);
    expect(await d.stop()).toEqual({ code: 0, signal: null });

    // The restore of docs/operations.md, "Backup and restore": db/ replaced, the marker kept.
    const db = path.join(d.dataDir, 'db');
    fs.renameSync(db, `${db}.replaced`);
    fs.mkdirSync(db, { mode: 0o700 });
    fs.copyFileSync(path.join(backupDir, 'data.mdb'), path.join(db, 'data.mdb'));
    await d.start();

    expect(d.stderr).not.toContain('First start');
    const missing: string[] = [];
    for (const id of before) if ((await d.api('GET', `/activity/messages/${id}`)).status !== 200) missing.push(id);
    expect(missing).toEqual([]);
  }, 60_000);

  it('leaves no data.mdb in the folder when the copy fails midway, says so in one line, and backs up there once it can', async () => {
    // The process may write 64 KiB per file (a full disk or quota the same way): the copy stops
    // after its first pages. It used to leave those as DIR/data.mdb, a truncated file that looks
    // like the backup and that the next backup refused to replace.
    if (!fs.existsSync('/usr/bin/prlimit')) return;
    const backupDir = path.join(tmp, 'backup-failed');
    const failed = await runCli(['store', 'backup', backupDir], { POSTRIDER_DATA_DIR: golden }, 20_000, { wrap: ['/usr/bin/prlimit', '--fsize=65536'] });
    expect(failed.code, failed.stderr).toBe(74);
    expect(failed.stderr).toMatch(new RegExp(`^postrider: the backup to ${backupDir} failed, ${backupDir}/data.mdb was not written: [^\\n]+\\n$`));
    expect(fs.readdirSync(backupDir)).toEqual([]);

    const backup = await runCli(['store', 'backup', backupDir], { POSTRIDER_DATA_DIR: golden });
    expect(backup.code, backup.stderr).toBe(0);
    expect(fs.readdirSync(backupDir)).toEqual(['data.mdb']);
    expect(fs.statSync(path.join(backupDir, 'data.mdb')).size).toBeGreaterThan(65536);
  }, 30_000);
});
