/**
 * What more workers buy (issue #31, item 5): the same transit encrypt against two servers started
 * the same way (LevelDB, configuration file), one with `workers = 1` (a single process, as before
 * workers existed) and one with `workers = 2`, in interleaved rounds (BENCH_ROUNDS). Batch encrypt
 * (1,000 × 64 B) and single-item encrypt; and kv writes, which do not scale with workers (each runs
 * on the active worker and is confirmed by the others), to measure what the coordination costs.
 *
 * The load comes from another process: `wrk` where the machine has it (/usr/bin/wrk), else
 * autocannon in a process of its own (bench/lib/load-process.ts), whose CPU time is reported so
 * that a client which costs as much as the server shows. Server CPU is summed over every process
 * of the server (the primary and each worker), per item; RSS is read per process right after the load
 * and again once the servers have been quiet long enough to give memory back (core/memory-reclaim.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { MEMORY_RECLAIM_DEFAULTS } from '../core/memory-reclaim.js';
import { cpuMicros, interleaved, rangeText, rssMb, ROUNDS, WARM_UP_S, type Measured } from './lib/load.js';
import { report, type Row } from './lib/report.js';
import { startConfiguredServer, type ConfiguredServer } from './lib/configured-server.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
const WRK = '/usr/bin/wrk';
const here = path.dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);

interface Shape {
  readonly label: string;
  readonly items: number;
  readonly connections: number;
  /** Where the requests go, and what they carry. A `[<id>]` in the path is a new id each request. */
  readonly path: string;
  readonly body: () => unknown;
}

const plaintext = () => ({ plaintext: randomBytes(64).toString('base64') });
const SHAPES: Shape[] = [
  { label: 'encrypt, batch 1,000 × 64 B', items: 1000, connections: 8, path: 'transit/encrypt/bench', body: () => ({ batch_input: Array.from({ length: 1000 }, plaintext) }) },
  { label: 'encrypt, single item 64 B', items: 1, connections: 64, path: 'transit/encrypt/bench', body: plaintext },
  // Each write to a key of its own: writes to one key wait for each other.
  { label: 'kv v2 write, 256 B, a new key each', items: 1, connections: 16, path: 'kv/data/bench-[<id>]', body: () => ({ data: { value: randomBytes(192).toString('base64') } }) },
];

/** The 2-worker batch figure the issue asks for, over 1 worker. */
const TARGET = 1.5;
/** What a serving process (a worker, or the single process) may hold once the load has ended. */
const RSS_TARGET_MB = 160;

interface Server {
  readonly workers: number;
  readonly configured: ConfiguredServer;
  /** The primary (with several workers) and every worker. */
  readonly pids: readonly number[];
  readonly workerPids: readonly number[];
}

/** The lowest server CPU per item and the highest client CPU share each cell showed. */
const cpu = new Map<string, { server: number; client: number }>();

async function start(workers: number): Promise<Server> {
  const configured = await startConfiguredServer({}, workers);
  const workerPids =
    workers === 1
      ? [configured.child.pid!]
      : [...configured.output().matchAll(/"pid":(\d+)[^\n]*"msg":"worker started"/g)].map((m) => Number(m[1]));
  const pids = workers === 1 ? workerPids : [configured.child.pid!, ...workerPids];
  return { workers, configured, pids, workerPids };
}

/** Runs the load once: requests answered, seconds, and the client's own CPU time (µs). */
async function loadOnce(server: Server, body: string, shape: Shape, seconds: number): Promise<{ total: number; duration: number; clientCpuUs: number }> {
  const url = `${server.configured.address}/v1/${shape.path}`;
  if (existsSync(WRK)) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-bench-wrk-'));
    try {
      const script = path.join(dir, 'post.lua');
      await writeFile(
        script,
        `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["X-Vault-Token"] = "${server.configured.token}"\n` +
          (url.includes('[<id>]') ? `counter = 0\nrequest = function() counter = counter + 1; return wrk.format(nil, (${JSON.stringify(`/v1/${shape.path}`)}):gsub("%[<id>%]", tostring(counter) .. "-" .. tostring(math.random(1e9)))) end\n` : ''),
      );
      // Through a shell that prints its own /proc stat once wrk is done: its children's CPU time is wrk's.
      const { stdout } = await run('/bin/sh', ['-c', '"$0" "$@" && cat /proc/$$/stat', WRK, '-t1', `-c${shape.connections}`, `-d${seconds}s`, '-s', script, url]);
      const total = Number(/(\d+) requests in/.exec(stdout)?.[1]);
      if (/Non-2xx/.test(stdout) || !total) throw new Error(`wrk: ${stdout}`);
      const stat = stdout.trim().split('\n').pop()!;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // cutime and cstime, in clock ticks (100 a second).
      return { total, duration: seconds, clientCpuUs: (Number(fields[13]) + Number(fields[14])) * 1e4 };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const options = {
    url,
    method: 'POST',
    connections: shape.connections,
    duration: seconds,
    headers: { 'X-Vault-Token': server.configured.token, 'Content-Type': 'application/json' },
    body,
    idReplacement: shape.path.includes('[<id>]'),
  };
  const { stdout } = await run(process.execPath, [path.join(here, 'lib/load-process.js'), JSON.stringify(options)], { maxBuffer: 1 << 20 });
  const result = JSON.parse(stdout.trim().split('\n').pop()!) as { total: number; duration: number; non2xx: number; errors: number; cpuUs: number };
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { total: result.total, duration: result.duration || seconds, clientCpuUs: result.cpuUs };
}

async function measure(server: Server, body: string, shape: Shape, seconds: number, cell: string): Promise<number> {
  const before = server.pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
  const { total, duration, clientCpuUs } = await loadOnce(server, body, shape, seconds);
  const serverCpuUs = server.pids.reduce((sum, pid) => sum + cpuMicros(pid), 0) - before;
  const items = total * shape.items;
  if (seconds >= DURATION_S) {
    const seen = cpu.get(cell);
    const server = (serverCpuUs * 1000) / items;
    const client = clientCpuUs / (duration * 1e6);
    cpu.set(cell, { server: Math.min(seen?.server ?? Infinity, server), client: Math.max(seen?.client ?? 0, client) });
  }
  return items / duration;
}

async function main(): Promise<void> {
  const one = await start(1);
  let started: Server | undefined;
  try {
    const two = await start(2);
    started = two;
    for (const server of [one, two]) {
      await server.configured.request('POST', 'transit/keys/bench', { type: 'aes256-gcm96' });
      await server.configured.request('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '2' } });
    }
    const rows: Row[] = [];
    for (const shape of SHAPES) {
      const body = JSON.stringify(shape.body());
      const m: Record<'one' | 'two', Measured> = await interleaved(
        (seconds) => ({
          one: () => measure(one, body, shape, seconds, `1 ${shape.label}`),
          two: () => measure(two, body, shape, seconds, `2 ${shape.label}`),
        }),
        DURATION_S,
      );
      const ratio = m.two.best / m.one.best;
      rows.push({
        operation: `${shape.label}, ${shape.connections} connections`,
        '1 worker items/s': m.one.best,
        '2 workers items/s': m.two.best,
        '2 / 1': ratio,
        ...(shape.items > 1 ? { target: `≥ ${TARGET}`, met: ratio >= TARGET ? 'yes' : 'no' } : { target: '', met: '' }),
        'ranges (1, 2)': `${rangeText(m.one)}, ${rangeText(m.two)}`,
        'server CPU ns/item (1, 2)': `${Math.round(cpu.get(`1 ${shape.label}`)!.server)}, ${Math.round(cpu.get(`2 ${shape.label}`)!.server)}`,
        'client CPU share (1, 2)': `${cpu.get(`1 ${shape.label}`)!.client.toFixed(2)}, ${cpu.get(`2 ${shape.label}`)!.client.toFixed(2)}`,
      });
    }
    const rss = (pids: readonly number[]) => pids.map((pid) => rssMb(pid));
    const rssText = (label: string) => {
      const primary = rssMb(two.configured.child.pid!);
      const workers = rss(two.workerPids);
      const single = rss(one.workerPids)[0]!;
      const largest = Math.max(single, ...workers);
      return {
        largest,
        text:
          `RSS ${label}: 1 worker ${single.toFixed(0)} MB; 2 workers ${workers.map((r) => r.toFixed(0)).join(' + ')} MB and the primary ${primary.toFixed(0)} MB ` +
          `(total ${(workers.reduce((a, b) => a + b, 0) + primary).toFixed(0)} MB).`,
      };
    };
    const right = rssText('right after the load');
    // A serving process gives its memory back once it has been quiet for some check intervals in a row (core/memory-reclaim.ts).
    const quietMs = (MEMORY_RECLAIM_DEFAULTS.quietIntervals + 1) * MEMORY_RECLAIM_DEFAULTS.intervalMs + 2_000;
    await delay(quietMs);
    const quiet = rssText(`once quiet (${quietMs / 1000} s after the load)`);
    report('cores', rows, [
      `${DURATION_S} s per cell after a ${WARM_UP_S} s warm-up, best of ${ROUNDS} interleaved rounds (the range beside it); ` +
        `load from ${existsSync(WRK) ? 'wrk (1 thread)' : 'autocannon in a process of its own (no wrk at /usr/bin/wrk)'}; ` +
        `load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(', ')} on ${os.availableParallelism()} cores.`,
      'Server CPU: user + system time of every process of the server (the primary and its workers), per item (a write is one item). ' +
        'Client CPU share: the load generator\'s CPU time over the cell\'s wall time (1.00 = one core busy).',
      right.text,
      `${quiet.text} Target: a serving process ≤ ${RSS_TARGET_MB} MB once the load has ended: ${quiet.largest <= RSS_TARGET_MB ? 'met' : 'not met'} (largest ${quiet.largest.toFixed(0)} MB).`,
    ]);
  } finally {
    await one.configured.stop();
    await started?.configured.stop();
  }
}

await main();
