// @ts-check
/**
 * ESLint with typescript-eslint's type-aware recommended rules
 * (https://typescript-eslint.io/users/configs#recommended-type-checked), over the TypeScript of the
 * service, its tests and its benchmarks: they find promises left floating or handed to a callback
 * whose result is dropped, methods called without their `this`, and `any` spreading from where it
 * is declared. `npm test` runs it (`npm run lint`). Every rule turned off says why beside it.
 */
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // Built output; and the AssemblyScript sources, which tsc does not read (asc builds them against
  // its own standard library, tsconfig.json leaves them out).
  globalIgnores(['dist/', 'build/', 'wasm/assembly/']),
  {
    // A disable comment that no rule needs is itself a finding.
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // The code marks with `!` an index it knows is in range (`items[i]!`), which tsc needs once
      // tsconfig.json sets noUncheckedIndexedAccess; until then the rule calls every such mark
      // unnecessary (over 700 of them). The redundant `as` casts it found are gone.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // An `async` function without `await` is how an implementation of a promise-returning
      // interface (a storage backend, an audit device, a handler) turns a throw into a rejection,
      // which its callers' `.catch` and `await` rely on.
      '@typescript-eslint/require-await': 'off',
      // A rest pattern names what it leaves out (`const { secret: _secret, ...shown } = config`).
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // Passing on what a `catch` caught (`reject(err)`) is allowed, as rethrowing it is.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // A closure made before a value exists may read it once it does (`let serving; … start({ mount:
      // () => serving … }); serving = backend`): the `let` is the honest declaration there.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // A test reads the server's JSON answer as `any` (test/helpers/http.ts) and asserts its shape
    // with chai, which is the type check; a benchmark reads the answers it drives the same way
    // (bench/lib/server.ts), and the CLI prints answers whose shape is the server's
    // (core/cli/client.ts). Typing every body would restate the assertions or the server's types.
    // The web UI reads the API's answers the same way (ui/api.ts) and shows them.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'core/cli/**/*.ts', 'ui/**/*.ts', 'ui/**/*.tsx'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // A test that watches a method keeps the original to call it with `.call(this, …)` and to put
    // it back afterwards, which is what the rule takes for a lost `this`.
    // chai's property assertions (`.to.be.empty`, `.not.NaN`) are expressions that assert when read.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/unbound-method': 'off', '@typescript-eslint/no-unused-expressions': 'off' },
  },
  {
    // Preact ignores what an event handler returns, so an async handler in a JSX attribute
    // (`onClick={async () => …}`) loses nothing; each such handler shows its own errors
    // (ui/components.tsx, the pages' error state). Promises handed anywhere else are still checked.
    files: ['ui/**/*.tsx'],
    rules: { '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }] },
  },
);
