/**
 * What collecting metrics costs: the same transit encrypt against two servers started the same way
 * (LevelDB, own process), one collecting metrics as every server does by default and one with
 * `telemetry { filter_default = false }`, which collects nothing. Batch encrypt (1,000 × 64 B) and
 * single-item encrypt, measured in interleaved rounds (BENCH_ROUNDS) so that the machine's other
 * load hits both alike; the on/off ratio is the figure (1.00 = free). Beside throughput, each
 * server's CPU time per item (its process's user + system time over the cell, from /proc): on a
 * machine shared with other work, throughput swings with their load, CPU per item much less. While
 * it runs the metrics server is scraped in Prometheus format every second, as Prometheus would.
 */
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { interleaved, rangeText, ROUNDS, WARM_UP_S, type Measured } from './lib/load.js';
import { report, type Row } from './lib/report.js';
import { startConfiguredServer, type ConfiguredServer } from './lib/configured-server.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);

interface Shape {
  readonly label: string;
  readonly items: number;
  readonly connections: number;
}

const SHAPES: Shape[] = [
  { label: 'batch 1,000 × 64 B', items: 1000, connections: 4 },
  { label: 'single item 64 B', items: 1, connections: 16 },
];

/** User + system CPU time of a process, in seconds (Linux: /proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The lowest CPU time per item each cell showed, in µs. */
const cpuPerItem = new Map<string, number>();

async function itemsPerSecond(server: ConfiguredServer, body: string, shape: Shape, seconds: number, cell: string): Promise<number> {
  const cpuBefore = cpuSeconds(server.child.pid!);
  const result = await autocannon({
    url: `${server.address}/v1/transit/encrypt/bench`,
    method: 'POST',
    connections: shape.connections,
    duration: seconds,
    headers: { 'X-Vault-Token': server.token, 'Content-Type': 'application/json' },
    body,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const perItem = ((cpuSeconds(server.child.pid!) - cpuBefore) / (result.requests.total * shape.items)) * 1e6;
  if (seconds >= DURATION_S) cpuPerItem.set(cell, Math.min(cpuPerItem.get(cell) ?? Infinity, perItem));
  return (result.requests.total / (result.duration || seconds)) * shape.items;
}

function row(shape: Shape, m: Record<'on' | 'off', Measured>): Row {
  const cpuOn = cpuPerItem.get(`on ${shape.label}`)!;
  const cpuOff = cpuPerItem.get(`off ${shape.label}`)!;
  return {
    operation: `encrypt, ${shape.label}`,
    'metrics on items/s': m.on.best,
    'metrics off items/s': m.off.best,
    'on / off': m.on.best / m.off.best,
    'ranges (on, off)': `${rangeText(m.on)}, ${rangeText(m.off)}`,
    'CPU µs/item on': cpuOn,
    'CPU µs/item off': cpuOff,
    'CPU on / off': cpuOn / cpuOff,
  };
}

async function main(): Promise<void> {
  const on = await startConfiguredServer();
  const off = await startConfiguredServer({ telemetry: { filter_default: false } });
  // Scraped as Prometheus would be, so the cost of reading the metrics is in the figure too.
  const scraper = setInterval(() => void fetch(`${on.address}/v1/sys/metrics?format=prometheus`, { headers: { 'X-Vault-Token': on.token } }).then((r) => r.text()), 1000);
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
          on: () => itemsPerSecond(on, body, shape, seconds, `on ${shape.label}`),
          off: () => itemsPerSecond(off, body, shape, seconds, `off ${shape.label}`),
        }),
        DURATION_S,
      );
      rows.push(row(shape, m));
    }
    const scrape = await fetch(`${on.address}/v1/sys/metrics?format=prometheus`, { headers: { 'X-Vault-Token': on.token } });
    const exposition = await scrape.text();
    report('metrics-cost', rows, [
      `${DURATION_S} s per cell after a ${WARM_UP_S} s warm-up, best of ${ROUNDS} interleaved rounds (the range beside it); ` +
        'two server processes (LevelDB) on this machine, one collecting metrics (scraped every second), one with telemetry filter_default = false. ' +
        'CPU µs/item: the lowest of the rounds, from the server process\'s user + system time (10 ms ticks); CPU on / off > 1 is the cost of metrics.',
      `The metrics server's exposition at the end: ${exposition.split('\n').filter((l) => l && !l.startsWith('#')).length} series, ${exposition.length} bytes.`,
    ]);
  } finally {
    clearInterval(scraper);
    await on.stop();
    await off.stop();
  }
}

await main();
