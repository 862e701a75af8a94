/**
 * The promise checks of `npm run check:structure` (typescript-eslint, type-aware): a Promise
 * used where a value is meant. The store port made many reads asynchronous (issue 31); a read
 * that became a Promise still passes a truthiness test (`if (!user)`), a `.filter()` or a
 * `.some()` without an error from the compiler, and an un-awaited write is silently lost on
 * error. These rules find those; nothing else of ESLint runs here (style is the formatter's).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export default tseslint.config({
  files: ['src/**/*.ts', 'test/**/*.ts'],
  ignores: ['**/*.d.ts'],
  languageOptions: {
    parser: tseslint.parser,
    parserOptions: { project: path.join(root, 'tsconfig.typecheck.json'), tsconfigRootDir: root },
  },
  plugins: { '@typescript-eslint': tseslint.plugin },
  linterOptions: { reportUnusedDisableDirectives: 'off' },
  rules: {
    // A Promise in a condition, a spread, or passed where a void callback is expected (an
    // async listener whose rejection nobody handles).
    '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
    // `await` on something that is not a Promise: a sign the callee's type is not what the caller thinks.
    '@typescript-eslint/await-thenable': 'error',
    // A Promise created and dropped: its rejection is unhandled and its work unordered.
    // lmdb-js's put/remove inside a write's callback return a Promise nobody needs: the write
    // itself is what commits (store/lmdb/env.ts), so those calls are known to be safe.
    '@typescript-eslint/no-floating-promises': [
      'error',
      {
        ignoreVoid: true,
        ignoreIIFE: false,
        allowForKnownSafeCalls: [{ from: 'package', package: 'lmdb', name: ['put', 'remove', 'putSync', 'removeSync', 'clearAsync', 'drop'] }],
      },
    ],
  },
});
