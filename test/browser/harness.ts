/**
 * The dashboard's browser harness: a real daemon (temp LMDB, the test DNS server, sandbox
 * delivery), Debian's chromium through playwright-core (no browser download; CHROMIUM_PATH
 * overrides /usr/bin/chromium), and the checks every page gets:
 *
 * - any console error, uncaught page error, failed request or HTTP answer >= 400 fails the test
 *   (rig.expectErrors(pattern) allows the ones a test provokes on purpose);
 * - checkA11y() runs axe-core in the page: zero serious or critical violations;
 * - screenshot(name) writes test-output/browser/<name>-360.png and -1280.png (full page).
 *
 * A page test file: `const rig = useRig();` at the top (start, sign in, assertClean after each
 * test, stop), then `await rig.visit('/channels'); await rig.checkA11y();
 * await rig.screenshot('channels'); ...` (test/browser/channels.test.ts shows the whole shape).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SCREENSHOT_DIR = path.join(ROOT, 'test-output', 'browser');
const AXE_SOURCE = fs.readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Rig {
  t: TestDaemon;
  dns: TestDns;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Opens a dashboard path ("/", "/channels") and waits until the page has settled. */
  visit(pagePath: string): Promise<void>;
  /** Signs in through the login form with the daemon's account key (or `apiKey`). */
  login(apiKey?: string): Promise<void>;
  /** Signs out with the banner's button and waits for the login form. */
  logout(): Promise<void>;
  /** axe-core on the current page: fails on any serious or critical violation. */
  checkA11y(): Promise<void>;
  /** Full-page screenshots at 360 and 1280 px wide; returns the two file paths. */
  screenshot(name: string): Promise<string[]>;
  /** A sandbox channel with a linked domain, ready to send from (see test/support/sending.ts). */
  /** A sandbox channel with a domain; `verified` publishes its records and verifies it (inbound routes need that). */
  sender(o?: { verified?: boolean }): Promise<Sender>;
  /** Allows errors (console text or "<status> <url>") matching `pattern` in this test. */
  expectErrors(pattern: RegExp): void;
  /** The errors seen so far that no expectErrors pattern allows. */
  errors(): string[];
  /** Fails with the list of unexpected errors; clears them and the allowed patterns. */
  assertClean(): void;
  stop(): Promise<void>;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/** Records console errors, page errors, failed requests and >= 400 answers into `sink`. */
function watch(page: Page, sink: string[]): void {
  page.on('console', (msg) => {
    if (msg.type() === 'error') sink.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => sink.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => {
    const why = req.failure()?.errorText ?? '';
    // ERR_ABORTED is the browser cancelling a fetch because the page navigated away (a test's
    // visit() while the previous page still loads its statistics): nothing failed. A server that
    // drops or breaks the answer shows as ERR_EMPTY_RESPONSE, ERR_CONNECTION_RESET and the like.
    if (why === 'net::ERR_ABORTED') return;
    sink.push(`request failed: ${req.method()} ${req.url()} ${why}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400) sink.push(`${res.status()} ${res.request().method()} ${res.url()}`);
  });
}

/** axe-core in the page (evaluated through the DevTools protocol, which the page's CSP does not govern). */
export async function checkA11y(page: Page): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  // Page code as text: the tests are type-checked without the DOM library.
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
    r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) })))`)) as AxeViolation[];
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad, `axe on ${page.url()}`).toEqual([]);
}

/** Full-page screenshots at 360 and 1280 px wide under SCREENSHOT_DIR; the viewport returns to 1280. */
export async function screenshot(page: Page, name: string): Promise<string[]> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const files: string[] = [];
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    // Two animation frames: layout, then the chart's ResizeObserver redraw, have run.
    await page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))');
    const file = path.join(SCREENSHOT_DIR, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage: true });
    files.push(file);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  return files;
}

export async function startRig(daemonOverrides: Record<string, unknown> = {}): Promise<Rig> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`No chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  const dns = await startDnsServer();
  const t = await startDaemon({ 'dns.servers': [dns.address], 'api.rateLimit': 100_000, ...daemonOverrides });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const seen: string[] = [];
  let allowed: RegExp[] = [];
  watch(page, seen);
  const unexpected = () => seen.filter((e) => !allowed.some((p) => p.test(e)));
  const rig: Rig = {
    t,
    dns,
    browser,
    context,
    page,
    async visit(pagePath) {
      await page.goto(`${t.url}/dashboard${pagePath === '/' ? '/' : pagePath}`);
      await page.waitForLoadState('networkidle');
    },
    async login(apiKey = t.apiKey) {
      await rig.visit('/');
      await page.getByLabel('API key').fill(apiKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await page.waitForLoadState('networkidle');
    },
    async logout() {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API key').waitFor();
    },
    checkA11y: () => checkA11y(page),
    screenshot: (name) => screenshot(page, name),
    sender: (o) => setupSender(t, dns, { deliveryType: 'sandbox', verify: o?.verified ?? false }),
    expectErrors(pattern) {
      allowed.push(pattern);
    },
    errors: unexpected,
    assertClean() {
      const errors = unexpected();
      seen.length = 0;
      allowed = [];
      expect(errors, 'console errors, failed requests or HTTP errors in the page').toEqual([]);
    },
    async stop() {
      await browser.close().catch(() => undefined);
      await t.stop();
      await dns.close();
    },
  };
  return rig;
}

/**
 * The hooks every page test file has, once: before all its tests a rig is started (daemon
 * overrides from `daemon`, a function when they need what an earlier beforeAll started, such as
 * an MX server's port), `prepare` runs (seed data, permissions), then the rig signs in
 * unless `login` is false; after each test assertClean(), after all stop(). The rig returned is
 * filled in by that beforeAll, so the file's tests use it as `rig.page`, `rig.t` and so on.
 */
export function useRig(options: { daemon?: Record<string, unknown> | (() => Record<string, unknown>); prepare?: (rig: Rig) => Promise<void>; login?: boolean } = {}): Rig {
  const rig = {} as Rig;
  beforeAll(async () => {
    Object.assign(rig, await startRig(typeof options.daemon === 'function' ? options.daemon() : options.daemon));
    await options.prepare?.(rig);
    if (options.login !== false) await rig.login();
  });
  afterAll(async () => {
    // Nothing to stop when startRig itself failed.
    await rig.stop?.();
  });
  afterEach(() => {
    rig.assertClean();
  });
  return rig;
}
