#!/usr/bin/env node
// The `keywarden` command: the compiled CLI lives in dist/ (built by `npm ci` through `prepare`).
import { main } from '../dist/core/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.message : String(err)); process.exitCode = 1; },
);
