/** Shared output of benchmarks: a markdown table on stdout and a JSON file under bench/results/. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type Row = Record<string, string | number>;

/** bench/results beside the sources (this file compiles to dist/bench/lib/). */
export const RESULTS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bench/results');

export function markdownTable(rows: readonly Row[]): string {
  if (rows.length === 0) return '(no rows)';
  const columns = Object.keys(rows[0]!);
  const cell = (v: string | number | undefined) => (typeof v === 'number' ? formatNumber(v) : (v ?? ''));
  return [
    `| ${columns.join(' | ')} |`,
    `| ${columns.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${columns.map((c) => cell(r[c])).join(' | ')} |`),
  ].join('\n');
}

function formatNumber(v: number): string {
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  return v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2);
}

/** Prints the table and writes it as JSON (writeResults). */
export function report(name: string, rows: readonly Row[], notes: readonly string[] = []): void {
  process.stdout.write(`\n### ${name}\n\n${markdownTable(rows)}\n`);
  for (const note of notes) process.stdout.write(`\n${note}\n`);
  writeResults(name, rows, notes);
}

/** Writes `{ name, date, node, cpus, rows, notes }` to bench/results/<name>.json. */
export function writeResults(name: string, rows: readonly Row[], notes: readonly string[] = []): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(
    path.join(RESULTS_DIR, `${name}.json`),
    JSON.stringify({ name, date: new Date().toISOString(), node: process.version, cpus: (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency, rows, notes }, null, 2),
  );
}
