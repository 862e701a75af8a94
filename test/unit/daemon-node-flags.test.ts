/**
 * The daemon's node flags are written in three places that start it: the systemd unit's
 * ExecStart, package.json's `start` and bin/postrider.js's first line (which the benchmarks read,
 * bench/lib/postrider.mjs). They must agree, and node must accept them: a flag node does not know
 * stops it before the daemon starts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (p: string) => fs.readFileSync(path.join(ROOT, p), 'utf8');

/** The flags between `node` and the script in a command line. */
function flagsBefore(command: string, script: string): string[] {
  const m = new RegExp(`(?:^|\\s)(?:/usr/bin/)?node((?:\\s+--\\S+)*)\\s+${script.replace(/[./]/g, '\\$&')}`).exec(command);
  if (!m) throw new Error(`no "node [flags] ${script}" in: ${command}`);
  return m[1]!.split(/\s+/).filter(Boolean);
}

describe("the daemon's node flags", () => {
  const shebang = read('bin/postrider.js').split('\n', 1)[0]!;
  // The same pattern as bench/lib/postrider.mjs's daemonNodeFlags, which the benchmarks start the daemon with.
  const fromShebang = (/^#!\/usr\/bin\/env -S node((?: --[\w-]+(?:=\S+)?)*)$/.exec(shebang)?.[1] ?? '').split(' ').filter(Boolean);
  const unit = /^ExecStart=(.*)$/m.exec(read('systemd/postrider.service'))?.[1] ?? '';
  const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start!;

  it('are the same in the systemd unit, npm start and the first line of bin/postrider.js', () => {
    expect(fromShebang).toContain('--no-memory-reducer');
    expect(flagsBefore(unit, '/opt/postrider/bin/postrider.js')).toEqual(fromShebang);
    expect(flagsBefore(start, 'bin/postrider.js')).toEqual(fromShebang);
  });

  it('are accepted by this node', () => {
    expect(execFileSync(process.execPath, [...fromShebang, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' })).toBe('ok');
  });
});
