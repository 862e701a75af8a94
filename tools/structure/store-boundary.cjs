#!/usr/bin/env node
/**
 * The store port's boundary in words dependency-cruiser cannot see (issue 31), run by
 * `npm run check:structure`:
 *
 * - no `store.write(`, `*InTxn`, `dbsOf(`, `new Store(` or `new LmdbStore(` outside the LMDB
 *   engine (src/store/lmdb/) and its tests: a transaction, a raw database or an engine is never
 *   in a caller's hands. The composition roots construct the engine (ENGINE_BUILDERS).
 * - under test/, only the LMDB engine's own tests (`*.lmdb.test.ts`, `test/support/lmdb-*.ts`)
 *   and the few files that choose an engine for the others (TEST_ENGINE_SEAMS) import
 *   src/store/lmdb/: every other test goes through the port (dependency-cruiser cruises src/
 *   only, so this reads the import lines itself; type-only imports count).
 *
 * Exits 1 with one line per finding, file:line and what was found.
 */
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');

/** Where src/ may construct the engine: the composition roots. */
const ENGINE_BUILDERS = new Set(['src/daemon.ts', 'src/compose/store-engine.ts', 'src/cli/with-store.ts', 'src/cli/store.ts', 'src/cli/migrate.ts', 'src/cli/store-copy.ts']);

/** The test files that pick the engine for every other test, and the engine's own tests. */
const TEST_ENGINE_SEAMS = new Set(['test/support/store.ts', 'test/support/engine-fixtures.ts', 'test/store-contract/engines.ts']);
const isEngineTest = (file) =>
  /\.(lmdb|pg)\.test\.ts$/.test(file) || /^test\/support\/(lmdb|pg)-[^/]+\.ts$/.test(file);

const INTERNALS = [
  { what: 'store.write(', re: /\bstore\.write\(/ },
  { what: '*InTxn', re: /\b\w+InTxn\b/ },
  { what: 'dbsOf(', re: /\bdbsOf\(/ },
  { what: 'new Store(', re: /\bnew Store\(/ },
];
const NEW_ENGINE = { what: 'new LmdbStore( or new PostgresStore(', re: /\bnew (LmdbStore|PostgresStore)\(/ };
const ENGINE_IMPORT = {
  what: 'an import of src/store/lmdb/ or src/store/postgres/',
  re: /(?:from\s+|import\s*\(\s*)['"][./]*(?:src\/)?store\/(?:lmdb|postgres)\//,
};

function filesUnder(dir) {
  const out = [];
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...filesUnder(rel));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** Lines of code only: // comments and the lines of block comments are left out. */
function codeLines(file) {
  const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  let inBlock = false;
  return lines.map((line) => {
    let code = line;
    if (inBlock) {
      const end = code.indexOf('*/');
      if (end < 0) return '';
      code = code.slice(end + 2);
      inBlock = false;
    }
    code = code.replace(/\/\*.*?\*\//g, '');
    const open = code.indexOf('/*');
    if (open >= 0) {
      inBlock = true;
      code = code.slice(0, open);
    }
    return code.replace(/\/\/.*$/, '');
  });
}

function check(file, rules) {
  const found = [];
  codeLines(file).forEach((code, i) => {
    for (const r of rules) if (r.re.test(code)) found.push(`${file}:${i + 1}: ${r.what}`);
  });
  return found;
}

const findings = [];
for (const file of filesUnder('src')) {
  if (file.startsWith('src/store/lmdb/') || file.startsWith('src/store/postgres/')) continue;
  findings.push(...check(file, ENGINE_BUILDERS.has(file) ? INTERNALS : [...INTERNALS, NEW_ENGINE]));
}
for (const file of filesUnder('test')) {
  if (isEngineTest(file)) continue;
  const rules = TEST_ENGINE_SEAMS.has(file) ? INTERNALS : [...INTERNALS, NEW_ENGINE, ENGINE_IMPORT];
  findings.push(...check(file, rules));
}

if (findings.length > 0) {
  console.error(`store port boundary: ${findings.length} finding(s) outside the LMDB engine and its tests (tools/structure/store-boundary.cjs):`);
  for (const f of findings) console.error(`  ${f}`);
  process.exit(1);
}
console.log('store port boundary: no engine internals outside the engine and its tests');
