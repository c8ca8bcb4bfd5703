/**
 * `node dist/bench/lib/profile-summary.js PROFILE.cpuprofile [N]`: the N (default 30) functions with
 * the most self time in a V8 CPU profile (as written by `node --cpu-prof`, see BENCH_PROFILE in
 * server.ts), each with its share of the samples taken while the process was not idle, and the
 * the same with callees included, and self time per file.
 */
import { readFileSync } from 'node:fs';

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
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[] };
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
