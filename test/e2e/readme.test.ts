/**
 * The README followed literally, so that it cannot drift from the product again (issue 30): the
 * first-email block runs as written (bash, curl, jq) against a real daemon whose data folder is
 * ./data of the folder the block runs in, as after `npm start`; the production set-up runs the
 * README's `postrider init` into a temporary root, starts the daemon on the file it wrote and uses
 * the CLI from another folder with the same --config.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { runCli, startServe } from '../support/cli.js';

const README = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The ```sh block that follows `<!-- readme-test: name -->`. */
function block(name: string): string {
  const marker = README.indexOf(`<!-- readme-test: ${name} -->`);
  expect(marker, `README marker ${name}`).toBeGreaterThan(-1);
  const start = README.indexOf('```sh\n', marker) + '```sh\n'.length;
  return README.slice(start, README.indexOf('\n```', start));
}

function has(tool: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Runs a script in bash with -euo pipefail; resolves with its output, fails with its stderr. */
function bash(script: string, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`the README block exited ${code}\nstdout: ${out}\nstderr: ${err}`))));
  });
}

describe.skipIf(!has('curl') || !has('jq'))('the README, followed as written', () => {
  let folder: string;
  let d: ChildDaemon;

  beforeAll(async () => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-readme-'));
    d = new ChildDaemon({ dataDir: path.join(folder, 'data') });
    await d.start();
  });

  afterAll(async () => {
    await d?.close();
    fs.rmSync(folder, { recursive: true, force: true });
  });

  it('sends the first email to the sandbox inbox', async () => {
    // The block names the default address; this daemon listens on a free port.
    const script = block('first-email').replaceAll('http://127.0.0.1:8080', d.url);
    const out = await bash(script, folder);
    expect(out).toContain('"name": "acme-shop.com"');
    expect(out).toContain('"accepted"');
    const events = await d.whileAlive(
      async () => {
        const list = await d.api('GET', '/activity/events?eventTypes=delivered');
        return list.body.totalCount === 1 ? list.body.results : undefined;
      },
      { what: 'the first email delivered to the sandbox' },
    );
    const channel = await d.api('GET', `/channels/${events[0].channelId}`);
    expect(channel.body).toMatchObject({ name: 'First tries', deliveryType: 'sandbox' });
  });

  it('schedules a send, moves it and cancels it, in the same terminal after the first email', async () => {
    // The block used a fixed scheduledAt that had become past (422 in_past) and an $ID it never set.
    // A daemon of its own: the first-email block makes the domain that the other test made already.
    const own = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-readme-scheduled-'));
    const daemon = new ChildDaemon({ dataDir: path.join(own, 'data') });
    let out: string;
    try {
      await daemon.start();
      out = await bash(`${block('first-email')}\n${block('scheduled')}`.replaceAll('http://127.0.0.1:8080', daemon.url), own);
    } finally {
      await daemon.close();
      fs.rmSync(own, { recursive: true, force: true });
    }
    const lines = out.trim().split('\n');
    const moved = JSON.parse(lines[lines.length - 2]);
    const canceled = JSON.parse(lines[lines.length - 1]);
    expect(moved).toMatchObject({ status: 'scheduled' });
    expect(canceled).toMatchObject({ messageId: moved.messageId, status: 'canceled' });
    expect(Date.parse(moved.scheduledAt)).toBeGreaterThan(Date.now());
  });
});

describe('the production set-up of the README', () => {
  let root: string;

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-readme-root-'));
  });

  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('runs init as written into a temporary root, and the daemon and the CLI from another folder use what it wrote', async () => {
    const line = /postrider init --hostname (\S+)/.exec(README);
    expect(line, 'the README names postrider init').not.toBeNull();
    const hostname = line![1].replace(/`$/, '');
    const file = path.join(root, 'etc', 'postrider', 'postrider.jsonc');
    const data = path.join(root, 'var', 'lib', 'postrider');
    const init = await runCli(['init', '--hostname', hostname, '--config', file, '--data-dir', data], {});
    expect(init.code, init.stderr).toBe(0);
    const daemon = await startServe({ POSTRIDER_CONFIG: file });
    await daemon.stop();
    expect(fs.existsSync(path.join(data, 'initial-api-key'))).toBe(true);
    const keys = await runCli(['keys', 'list', '--config', file], {}, 20_000, { cwd: os.tmpdir() });
    expect(keys.code, keys.stderr).toBe(0);
    expect(keys.stdout).toContain('initial');
  });
});
