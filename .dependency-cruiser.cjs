/**
 * The import rules of the layers (docs/architecture.md): `npm run check:structure`, run by CI
 * after the type check. Every rule is an error, so a violation fails the run.
 *
 * Type-only imports count (tsPreCompilationDeps): a type cycle still ties two files together,
 * and a type imported from the store is how a write verb starts creeping into an adapter.
 * Imports written `../x.js` resolve to `../x.ts`: dependency-cruiser maps .js to .ts for
 * TypeScript sources by itself, and reads module resolution from tsconfig.json.
 */

const fs = require('node:fs');
const path = require('node:path');

/**
 * dependency-cruiser 17 reads TypeScript through the compiler API of typescript 2 to 6, which it
 * imports from its own location. typescript 7 (tsgo, our compiler) has no such API, and then
 * dependency-cruiser silently skips every .ts file and reports "no violations, 0 modules". That
 * green would check nothing, so the run stops here instead.
 */
function requireTypeScriptParser() {
  const cruiser = fs.realpathSync(process.argv[1] ?? '.');
  const root = cruiser.includes(`${path.sep}bin${path.sep}`) ? cruiser.slice(0, cruiser.lastIndexOf(`${path.sep}bin${path.sep}`)) : process.cwd();
  let version;
  try {
    version = require(require.resolve('typescript/package.json', { paths: [root] })).version;
  } catch {
    version = undefined;
  }
  const major = Number(String(version).split('.')[0]);
  if (!(major >= 2 && major < 7)) {
    throw new Error(
      `check:structure: dependency-cruiser (${root}) finds typescript ${version ?? '(none)'}; it needs typescript 2-6 ` +
        'beside it to read .ts files, or it cruises nothing and passes. Run it from an install that has one.',
    );
  }
}

requireTypeScriptParser();

/** Standard modules that only compute (no file, network, process or thread access). The domain
 *  layer may use these; anything doing I/O belongs in a service, the store or an adapter.
 *  async_hooks: AsyncLocalStorage only (domain/request-deadline.ts), which carries a value along
 *  the promises of one request. */
const PURE_BUILTINS = ['assert', 'async_hooks', 'buffer', 'crypto', 'net', 'path', 'punycode', 'querystring', 'string_decoder', 'url', 'util'];

/** The adapters: they parse, call one service verb and map the result (issue 19). */
const ADAPTERS = ['^src/http/', '^src/smtp/', '^src/inbound/listener\\.ts$', '^src/cli/'];

/** The store files the CLI may import, for what no service does: the store around one command. */
const CLI_STORE_ENTRIES = [
  // Store: every command that reads the store opens it and stops it (cli/with-store.ts), and the
  // exit guard tells a failed commit from other errors (isLmdbCommitFailure).
  '^src/store/lmdb/env\\.ts$',
  // The engine the commands open (the store port over the LMDB environment).
  '^src/store/lmdb/engine\\.ts$',
  // Cluster mode: `migrate` applies the PostgreSQL schema (and reports its version).
  '^src/store/postgres/engine\\.ts$',
  // `serve` holds the data folder's lock for the daemon's lifetime, before anything opens the store.
  '^src/store/lmdb/folder-lock\\.ts$',
  // `store check` reads every page and entry of the store: a check of the file, no resource's verb.
  '^src/store/lmdb/check\\.ts$',
  // `store backup` reports the copy's size and transaction from its meta pages.
  '^src/store/lmdb/data-file\\.ts$',
  // `store copy-to-postgres` (issue 32) joins the two engines' halves of the copy, which share only
  // the port's transfer records (store/port/transfer.ts): LMDB's export and PostgreSQL's import.
  // Neither is a verb of the port: a whole-store copy is an operator's act on two engines at once.
  '^src/store/lmdb/export/index\\.ts$',
  '^src/store/postgres/import/index\\.ts$',
  // A command pointed at a folder without a store says where the folder setting came from
  // (cli/with-store.ts adds that to the store's one-line problem).
  '^src/store/port/problems\\.ts$',
];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycle in src/, type-only imports included: move the shared declarations to their own file (STYLE 8).',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'adapters-not-to-store',
      severity: 'error',
      comment:
        'HTTP routes, SMTP handlers, the inbound listener and the CLI call services, never the store: writes and policy live ' +
        'in the service of the resource. Type-only imports of store record types are allowed.',
      from: { path: ADAPTERS },
      to: { path: '^src/store/', pathNot: CLI_STORE_ENTRIES, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'store-entries-only-in-cli',
      severity: 'error',
      comment: 'The store files the CLI opens and checks the store with (CLI_STORE_ENTRIES) are not for the other adapters.',
      from: { path: ADAPTERS, pathNot: '^src/cli/' },
      to: { path: CLI_STORE_ENTRIES, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'store-port-only',
      severity: 'error',
      comment:
        'Outside src/store/, the store is the port (src/store/port/): services, the pipeline and the observers take a ' +
        'StorePort and never name an engine (issue 31). Only the composition roots construct one: daemon.ts the engine ' +
        '(store/lmdb/engine.ts), the CLI the engine and the files of CLI_STORE_ENTRIES. Type-only imports count.',
      from: { path: '^src/', pathNot: ['^src/store/', '^src/daemon\\.ts$', '^src/cli/', '^src/compose/store-engine\\.ts$'] },
      to: { path: '^src/store/', pathNot: '^src/store/port/' },
    },
    {
      name: 'composition-roots-construct-only',
      severity: 'error',
      comment:
        'The composition roots (daemon.ts, compose/store-engine.ts, which picks LMDB or PostgreSQL) construct an engine and ' +
        'call the port; nothing else of an engine (type-only imports count).',
      from: { path: ['^src/daemon\\.ts$', '^src/compose/'] },
      to: { path: '^src/store/', pathNot: ['^src/store/port/', '^src/store/(lmdb|postgres)/engine\\.ts$'] },
    },
    {
      name: 'cli-store-entries-only',
      severity: 'error',
      comment: 'The CLI reaches the engine through CLI_STORE_ENTRIES only, type-only imports included; everything else through the port.',
      from: { path: '^src/cli/' },
      to: { path: '^src/store/', pathNot: ['^src/store/port/', ...CLI_STORE_ENTRIES] },
    },
    {
      name: 'store-port-is-interfaces',
      severity: 'error',
      comment:
        'src/store/port/ declares what every engine implements: at run time it imports only its own files and domain/ ' +
        '(pure rules), and never an engine, so the port builds without one (type-only imports of record shapes allowed).',
      from: { path: '^src/store/port/' },
      to: { pathNot: ['^src/store/port/', '^src/domain/'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'store-port-no-engine',
      severity: 'error',
      comment: 'The port names no engine, not even for a type.',
      from: { path: '^src/store/port/' },
      to: { path: '^src/store/(lmdb|postgres)/' },
    },
    {
      name: 'engines-apart',
      severity: 'error',
      comment:
        'The two engines share only the port and domain/: neither imports the other (type-only imports count), so each ' +
        'can change, or be left out of a build, alone. A rule both need belongs in domain/ or the port.',
      from: { path: '^src/store/(lmdb|postgres)/' },
      to: { path: '^src/store/(lmdb|postgres)/', pathNot: '^src/store/$1/' },
    },
    {
      name: 'postgres-driver-in-engine',
      severity: 'error',
      comment: 'Only the PostgreSQL engine (src/store/postgres/) and the PostgreSQL coordination talk to PostgreSQL.',
      from: { path: '^src/', pathNot: ['^src/store/postgres/', '^src/coordination/postgres/'] },
      to: { path: '(^|/)node_modules/postgres/' },
    },
    {
      name: 'engine-below-services',
      severity: 'error',
      comment:
        'An engine implements the port over its database: it imports the port, domain/ and its own files, never a service, ' +
        'the pipeline or an adapter (type-only imports count), so the dependency goes one way: services → port ← engine.',
      from: { path: '^src/store/(lmdb|postgres)/' },
      to: { path: '^src/', pathNot: ['^src/store/', '^src/domain/'] },
    },
    {
      name: 'lmdb-only-in-store-env',
      severity: 'error',
      comment: 'Only src/store/lmdb/env.ts opens LMDB (STYLE 4); the rest of the engine goes through its databases.',
      from: { pathNot: '^src/store/lmdb/env\\.ts$' },
      to: { path: '(^|/)node_modules/lmdb/' },
    },
    {
      name: 'store-databases-private',
      severity: 'error',
      comment: 'The raw databases (store/lmdb/databases.ts) are for the LMDB engine only; everything else calls the port.',
      from: { pathNot: '^src/store/lmdb/' },
      to: { path: '^src/store/lmdb/databases\\.ts$' },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment:
        'src/domain/ holds pure types and rules: it imports other domain files and standard modules, nothing of the ' +
        'layers above it and no package (a rule that needs one is not domain code).',
      from: { path: '^src/domain/' },
      to: { pathNot: '^src/domain/', dependencyTypesNot: ['core'] },
    },
    {
      name: 'domain-no-io-builtins',
      severity: 'error',
      comment: 'src/domain/ does no I/O: of the standard modules it may use only those that compute (PURE_BUILTINS).',
      from: { path: '^src/domain/' },
      to: { dependencyTypes: ['core'], pathNot: `^(node:)?(${PURE_BUILTINS.join('|')})$` },
    },
    {
      name: 'coordination-stands-alone',
      severity: 'error',
      comment:
        'src/coordination/ (the coordination port and its implementations) sits beside the store, under the services: it ' +
        'imports its own files, domain/ and the pure time and rate primitives of queue/ (clock.ts, rate-limiter.ts), never ' +
        'the store (a cluster coordination is not an engine detail) nor a layer that uses it (http, smtp, delivery, ' +
        'submission, webhooks...). Type-only imports count.',
      from: { path: '^src/coordination/' },
      to: { path: '^src/', pathNot: ['^src/coordination/', '^src/domain/', '^src/queue/(clock|rate-limiter)\\.ts$'] },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A source file nothing imports is dead code (or an entry point missing from this list).',
      from: { orphan: true, path: '^src/', pathNot: ['\\.d\\.ts$'] },
      to: {},
    },
    {
      name: 'not-to-dev-dep',
      severity: 'error',
      comment: 'src/ runs in production, where `npm ci --omit=dev` leaves devDependencies out.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'], pathNot: ['(^|/)node_modules/@types/'] },
    },
    {
      name: 'no-non-package-json',
      severity: 'error',
      comment: 'A package used by src/ must be declared in package.json, not found by accident in node_modules.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve to a file fails at run time.',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages resolve through their `exports` maps with the conditions Node's ESM loader uses
    // (we are "type": "module"): deep imports such as nodemailer/lib/errors.js and
    // smtp-server/lib/smtp-connection.js exist only there.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default', 'types'],
    },
  },
};
