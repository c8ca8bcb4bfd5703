/**
 * `npm run bench [-- NAME ...]`: runs every compiled `*.bench.js` in dist/bench (or those whose
 * name contains NAME), one at a time, each in its own process so one cannot warm the other.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const benches = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => filters.length === 0 || filters.some((name) => f.includes(name)))
  .sort();

if (benches.length === 0) {
  process.stderr.write(`no benchmark matches ${filters.join(', ') || '(any)'}\n`);
  process.exit(2);
}

let failed = 0;
for (const bench of benches) {
  process.stdout.write(`\n## ${bench.replace(/\.bench\.js$/, '')}\n`);
  // --expose-gc: a benchmark may collect garbage inside the cell that made it (wasm-crypto does).
  const result = spawnSync(process.execPath, ['--expose-gc', path.join(here, bench)], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
