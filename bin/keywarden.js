#!/usr/bin/env node
// The `keywarden` command. The compiled CLI lives in dist/: `npm run build` writes it (npm runs that
// through `prepare` in a clone and for a git install); the published package carries it prebuilt.
import { main } from '../dist/core/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.message : String(err)); process.exitCode = 1; },
);
