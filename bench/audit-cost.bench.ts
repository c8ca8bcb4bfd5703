/**
 * What a `file` audit device costs: the same transit encrypt against two servers started the same
 * way (LevelDB, own process), one with a `file` audit device declared in its configuration file
 * (every request and response HMAC'd and appended to a real file) and one without. Batch encrypt
 * (1,000 × 64 B) and single-item encrypt, measured in interleaved rounds (BENCH_ROUNDS) so that the
 * machine's other load hits both alike; the on/off ratio is the figure (1.00 = free). Beside
 * throughput, each server's CPU time per request (its process's user + system time over the cell,
 * from /proc), which a shared machine moves much less than throughput.
 */
import { mkdtemp, rm, stat, truncate } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuMicros, interleaved, rangeText, ROUNDS, WARM_UP_S, type Measured } from './lib/load.js';
import { report, type Row } from './lib/report.js';
import { startConfiguredServer, type ConfiguredServer } from './lib/configured-server.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);

interface Shape {
  readonly label: string;
  readonly items: number;
  readonly connections: number;
  /** The least audit on / off throughput the issue (#31) asks for. */
  readonly target: number;
}

const SHAPES: Shape[] = [
  { label: 'batch 1,000 × 64 B', items: 1000, connections: 8, target: 0.75 },
  { label: 'single item 64 B', items: 1, connections: 64, target: 0.75 },
];

/** The lowest CPU time per request each cell showed, in µs. */
const cpuPerRequest = new Map<string, number>();

/** The audit log's size summed over the cells (it is emptied after each, so a run needs little disk). */
let logBytes = 0;

async function itemsPerSecond(server: ConfiguredServer, body: string, shape: Shape, seconds: number, cell: string, log?: string): Promise<number> {
  const cpuBefore = cpuMicros(server.child.pid!);
  const result = await autocannon({
    url: `${server.address}/v1/transit/encrypt/bench`,
    method: 'POST',
    connections: shape.connections,
    duration: seconds,
    headers: { 'X-Vault-Token': server.token, 'Content-Type': 'application/json' },
    body,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${cell}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const perRequest = (cpuMicros(server.child.pid!) - cpuBefore) / result.requests.total;
  if (log) {
    logBytes += (await stat(log)).size;
    await truncate(log);
  }
  if (seconds >= DURATION_S) cpuPerRequest.set(cell, Math.min(cpuPerRequest.get(cell) ?? Infinity, perRequest));
  return (result.requests.total / (result.duration || seconds)) * shape.items;
}

function row(shape: Shape, m: Record<'on' | 'off', Measured>): Row {
  const cpuOn = cpuPerRequest.get(`on ${shape.label}`)!;
  const cpuOff = cpuPerRequest.get(`off ${shape.label}`)!;
  const ratio = m.on.best / m.off.best;
  return {
    operation: `encrypt, ${shape.label}, ${shape.connections} connections`,
    'audit on items/s': m.on.best,
    'audit off items/s': m.off.best,
    'on / off': ratio,
    target: `≥ ${shape.target}`,
    met: ratio >= shape.target ? 'yes' : 'no',
    'ranges (on, off)': `${rangeText(m.on)}, ${rangeText(m.off)}`,
    'CPU µs/request on': cpuOn,
    'CPU µs/request off': cpuOff,
    'CPU off / on': cpuOff / cpuOn,
  };
}

async function main(): Promise<void> {
  const logDir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-bench-audit-'));
  const logFile = path.join(logDir, 'audit.log');
  const on = await startConfiguredServer({ audit: [{ file: { file: { options: { file_path: logFile } } } }] });
  const off = await startConfiguredServer();
  try {
    for (const server of [on, off]) await server.request('POST', 'transit/keys/bench', { type: 'aes256-gcm96' });
    const rows: Row[] = [];
    for (const shape of SHAPES) {
      const input = shape.items === 1
        ? { plaintext: randomBytes(64).toString('base64') }
        : { batch_input: Array.from({ length: shape.items }, () => ({ plaintext: randomBytes(64).toString('base64') })) };
      const body = JSON.stringify(input);
      const m = await interleaved(
        (seconds) => ({
          on: () => itemsPerSecond(on, body, shape, seconds, `on ${shape.label}`, logFile),
          off: () => itemsPerSecond(off, body, shape, seconds, `off ${shape.label}`),
        }),
        DURATION_S,
      );
      rows.push(row(shape, m));
    }
    report('audit-cost', rows, [
      `${DURATION_S} s per cell after a ${WARM_UP_S} s warm-up, best of ${ROUNDS} interleaved rounds (the range beside it); ` +
        'two server processes (LevelDB) on this machine, one with a file audit device declared in its configuration, one without; ' +
        'the load generator (autocannon) runs in this process on the same cores.',
      "CPU µs/request: the lowest of the rounds, from the server process's user + system time (10 ms ticks); CPU off / on is the share of a request's CPU left to it with audit on.",
      `The audit device wrote ${(logBytes / 2 ** 20).toFixed(0)} MiB in all (the file is emptied after each cell).`,
    ]);
  } finally {
    await on.stop();
    await off.stop();
    await rm(logDir, { recursive: true, force: true });
  }
}

await main();
