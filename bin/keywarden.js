#!/usr/bin/env node
// The `keywarden` command. The compiled CLI lives in dist/: `npm run build` writes it (npm runs that
// through `prepare` in a clone and for a git install); the published package carries it prebuilt.
// `keywarden server` may first start itself again, in the same process, with the V8 flags it runs
// under (core/start-flags.ts says which and why); here, before the CLI is even loaded.
if (process.argv[2] === 'server') (await import('../dist/core/start-flags.js')).restartWithStartFlags();
const { main } = await import('../dist/core/cli/main.js');

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.message : String(err)); process.exitCode = 1; },
);
