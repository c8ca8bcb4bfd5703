/** Load generation with autocannon, and reading a process's resident memory. */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** With `serverPid`: the CPU time (user + system) that process spent per answered request, µs. */
  readonly serverCpuUs?: number;
}

export async function load(
  url: string,
  options: { body?: string; headers?: Record<string, string>; connections: number; seconds: number; method?: 'POST' | 'GET'; serverPid?: number },
): Promise<LoadResult> {
  const cpuBefore = options.serverPid === undefined ? 0 : cpuMicros(options.serverPid);
  const result = await autocannon({
    url,
    method: options.method ?? 'POST',
    connections: options.connections,
    duration: options.seconds,
    headers: { 'Content-Type': 'application/json', ...(options.headers ?? {}) },
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return {
    requestsPerSecond: result.requests.total / (result.duration || options.seconds),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    ...(options.serverPid === undefined ? {} : { serverCpuUs: (cpuMicros(options.serverPid) - cpuBefore) / Math.max(1, result.requests.total) }),
  };
}

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system) a process has used, µs, from /proc/PID/stat (Linux; 10 ms steps, so
 * measure thousands of requests). Unlike requests per second it hardly depends on what else the
 * machine runs, so it compares servers on a shared machine.
 */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces, so it is skipped to its closing parenthesis): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
}

/** VmRSS of a process in MB (Linux). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** Rounds of `interleaved` (BENCH_ROUNDS, default 3). */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** Seconds each interleaved cell runs once, uncounted, before the measured rounds. */
export const WARM_UP_S = 1;

/** A cell's best figure over the rounds (higher is better) and its lowest. */
export interface Measured {
  readonly best: number;
  readonly low: number;
}

/**
 * Measures every cell of `cellsFor(seconds)` `rounds` times, round by round (a, b, c, a, b, c…)
 * so that a burst of other work on the machine hits all cells alike, and keeps each cell's best
 * figure and its range. Each cell first runs once for WARM_UP_S, not counted: the first seconds of
 * a cell otherwise measure V8 compiling the path and the heap growing, which the first cell of a
 * run paid alone (bench/README.md, "How the figures are taken").
 */
export async function interleaved<K extends string>(
  cellsFor: (seconds: number) => Record<K, () => Promise<number>>,
  seconds: number,
  rounds = ROUNDS,
): Promise<Record<K, Measured>> {
  const warmUp = cellsFor(WARM_UP_S);
  for (const name of Object.keys(warmUp) as K[]) await warmUp[name]();
  const cells = cellsFor(seconds);
  const out = {} as Record<K, Measured>;
  for (let round = 0; round < rounds; round++) {
    for (const name of Object.keys(cells) as K[]) {
      const value = await cells[name]();
      const seen = out[name];
      out[name] = seen ? { best: Math.max(seen.best, value), low: Math.min(seen.low, value) } : { best: value, low: value };
    }
  }
  return out;
}

/** "low–best" in thousands, with a decimal below 100k (the ranges columns). */
export function rangeText(cell: Measured): string {
  const k = (v: number) => (v >= 100_000 ? `${Math.round(v / 1000)}k` : `${Math.round(v / 100) / 10}k`);
  return `${k(cell.low)}–${k(cell.best)}`;
}
