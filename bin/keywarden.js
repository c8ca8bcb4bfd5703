#!/usr/bin/env node
// The `keywarden` command. The compiled CLI lives in dist/: `npm run build` writes it (npm runs that
// through `prepare` in a clone and for a git install); the published package carries it prebuilt.
// `keywarden server` may first start itself again, in the same process, with V8's helper threads
// sized to the machine (core/helper-pool.ts says why); here, before the CLI is even loaded.
if (process.argv[2] === 'server') (await import('../dist/core/helper-pool.js')).restartWithSizedHelperPool();
const { main } = await import('../dist/core/cli/main.js');

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.message : String(err)); process.exitCode = 1; },
);
