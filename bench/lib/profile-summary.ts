/**
 * `node dist/bench/lib/profile-summary.js PROFILE.cpuprofile [N]`: the N (default 30) functions with
 * the most self time in a V8 CPU profile (as written by `node --cpu-prof`, see BENCH_PROFILE in
 * server.ts), each with its share of the samples taken while the process was not idle, and the
 * the same with callees included, and self time per file; then the longest holds of the event loop:
 * those loop-holds.ts noted, each with its length and the functions that took most of it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

const [file, limitText] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: profile-summary.js PROFILE.cpuprofile [N]\n');
  process.exit(2);
}
const limit = Number(limitText ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const counts = new Map<number, number>();
for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);

function label(node: ProfileNode): { name: string; where: string } {
  const frame = node.callFrame;
  const where = frame.url.replace(/^file:\/\/.*?\/(dist|node_modules)\//, '$1/') || '(native)';
  return { name: `${frame.functionName || '(anonymous)'}  ${where}:${frame.lineNumber + 1}`, where };
}

const self = new Map<string, number>();
const total = new Map<string, number>();
const perFile = new Map<string, number>();
let busy = 0;
for (const [id, count] of counts) {
  const node = byId.get(id)!;
  const fn = node.callFrame.functionName;
  if (fn === '(idle)' || fn === '(program)') continue;
  busy += count;
  const { name, where } = label(node);
  self.set(name, (self.get(name) ?? 0) + count);
  perFile.set(where, (perFile.get(where) ?? 0) + count);
  // Total (inclusive) time: each function once per sample, however often it recurs on the stack.
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const frame = label(byId.get(at)!).name;
    if (seen.has(frame)) continue;
    seen.add(frame);
    total.set(frame, (total.get(frame) ?? 0) + count);
  }
}

const top = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, limit);
const pct = (n: number) => `${((100 * n) / busy).toFixed(1).padStart(5)} %`;
process.stdout.write(`${busy} busy samples of ${profile.samples.length}\n\nself time by function\n`);
for (const [name, n] of top(self)) process.stdout.write(`${pct(n)}  ${name}\n`);
process.stdout.write('\ntotal time (self and callees) by function\n');
for (const [name, n] of top(total)) process.stdout.write(`${pct(n)}  ${name}\n`);
process.stdout.write('\nself time by file\n');
for (const [name, n] of top(perFile)) process.stdout.write(`${pct(n)}  ${name}\n`);

/**
 * The holds loop-holds.ts noted (holds-<pid>.json beside the profile): each with the functions that
 * ran in it by self time, and by entry point into this project's code (the outermost dist/ frame of
 * each sample).
 */
const HOLDS = 25;
const pid = /\.(\d+)\.\d+\.\d+\.cpuprofile$/.exec(file)?.[1];
const holdsFile = path.join(path.dirname(file), `holds-${pid}.json`);
const noted = existsSync(holdsFile) ? (JSON.parse(readFileSync(holdsFile, 'utf8')) as [number, number][]) : [];
const times: number[] = [];
for (let i = 0, t = (profile as unknown as { startTime: number }).startTime; i < profile.samples.length; i++) times.push((t += profile.timeDeltas[i]!));
const holds = noted
  .map(([from, to]) => {
    const samples: number[] = [];
    for (let i = 0; i < times.length; i++) if (times[i]! >= from && times[i]! <= to && !['(idle)', '(program)'].includes(byId.get(profile.samples[i]!)!.callFrame.functionName)) samples.push(profile.samples[i]!);
    return { ms: (to - from) / 1000, samples };
  })
  .filter((hold) => hold.samples.length > 0)
  .sort((a, b) => b.ms - a.ms);

function entryOf(id: number): string {
  let outer: string | undefined;
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const node = byId.get(at)!;
    if (node.callFrame.url.includes('/dist/')) outer = label(node).name;
  }
  return outer ?? label(byId.get(id)!).name;
}

const shares = (ids: readonly number[], key: (id: number) => string): string => {
  const m = new Map<string, number>();
  for (const id of ids) m.set(key(id), (m.get(key(id)) ?? 0) + 1);
  return [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([name, n]) => `${Math.round((100 * n) / ids.length)} % ${name}`)
    .join('; ');
};
process.stdout.write(`\nholds of the event loop over 10 ms: ${noted.length}${noted.length ? '' : ` (no ${holdsFile})`}; the longest\n`);
for (const hold of holds.slice(0, HOLDS)) {
  process.stdout.write(`${hold.ms.toFixed(1).padStart(7)} ms  self: ${shares(hold.samples, (id) => label(byId.get(id)!).name)}\n`);
  process.stdout.write(`            entry: ${shares(hold.samples, entryOf)}\n`);
}
