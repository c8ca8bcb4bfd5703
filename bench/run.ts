/**
 * `npm run bench [-- NAME ... [-option value ...]]`: runs every compiled `*.bench.js` in dist/bench (or those whose
 * name contains NAME), one at a time, each in its own process so one cannot warm the other.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchChartSvg, type BenchResult } from './lib/chart.js';
import { RESULTS_DIR } from './lib/report.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// `-name value` pairs are options every benchmark is given (soak's `-duration 30m`); the other
// arguments pick benchmarks by name.
const filters: string[] = [];
const options: string[] = [];
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i]!;
  if (arg.startsWith('-')) options.push(arg, process.argv[++i] ?? '');
  else filters.push(arg);
}
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
  const result = spawnSync(process.execPath, ['--expose-gc', path.join(here, bench), ...options], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
// The chart shows the latest results of every benchmark, this run's and those of earlier runs.
if (existsSync(RESULTS_DIR)) {
  const results = readdirSync(RESULTS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(path.join(RESULTS_DIR, f), 'utf8')) as BenchResult);
  const chart = path.join(RESULTS_DIR, 'chart.svg');
  writeFileSync(chart, benchChartSvg(results));
  process.stdout.write(`\nchart: ${path.relative(process.cwd(), chart)}\n`);
}
process.exit(failed === 0 ? 0 : 1);
