/**
 * End-to-end batch encrypt and decrypt over HTTP against the real server (dev mode, LevelDB, its
 * own process), beside two floors served by the same server and pipeline: `echo` (the same JSON
 * and base64 work, no cryptography; for decrypt, `echo-decrypt`: ciphertexts decoded and
 * plaintext-sized bytes encoded back) and `naive` (per-item createCipheriv with a randomBytes nonce,
 * createDecipheriv for decrypt).
 * Reported as items/s and ratios measured in this one run; each cell is measured in interleaved
 * rounds (BENCH_ROUNDS, default 3) after an uncounted warm-up, and its best figure kept, as the machine is shared.
 *
 * Then batch encrypt against the floor a user would build (bench/lib/naive-koa.ts: plain koa outside
 * our pipeline, per-item createCipheriv, and its no-crypto twin), driven by a client that reads and
 * parses every answer as real clients do (bench/lib/parsing-load.ts).
 *
 * With BENCH_BASELINE=<directory of another built checkout> (a git worktree of an older commit,
 * built), Keywarden's cells also run against a server of that build, interleaved with this one's,
 * and a row per figure gives this build over that one: before and after measured in one run.
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { interleaved, rangeText, ROUNDS, WARM_UP_S, type Measured } from './lib/load.js';
import { report, type Row } from './lib/report.js';
import { startBenchServer, type BenchServer } from './lib/server.js';
import { startHelper } from './lib/helper-process.js';
import { parsingLoad } from './lib/parsing-load.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTIONS = 4;
const BASELINE = process.env.BENCH_BASELINE;

interface Shape {
  readonly label: string;
  readonly items: number;
  readonly bytes: number;
}

const SHAPES: Shape[] = [
  { label: '1,000 × 64 B', items: 1000, bytes: 64 },
  { label: '100 × 1 KB', items: 100, bytes: 1024 },
];

async function itemsPerSecond(server: BenchServer, path: string, body: string, items: number, seconds: number): Promise<number> {
  const result = await autocannon({
    url: `${server.address}/v1/${path}`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'X-Vault-Token': server.token, 'Content-Type': 'application/json' },
    body,
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return (result.requests.total / (result.duration || seconds)) * items;
}

/** Each cell's measurement: items/s of POSTing its body to its path on its server (for `seconds`). */
function measure<K extends string>(cells: Record<K, readonly [BenchServer, string, string]>, items: number, seconds: number): Record<K, () => Promise<number>> {
  const out = {} as Record<K, () => Promise<number>>;
  for (const name of Object.keys(cells) as K[]) {
    const [server, path, body] = cells[name];
    out[name] = () => itemsPerSecond(server, path, body, items, seconds);
  }
  return out;
}

/** A row of this build's items/s over the baseline build's (BENCH_BASELINE), both measured in interleaved rounds. */
function baselineRow(operation: string, shape: Shape, ours: Measured, before: Measured): Row {
  return {
    operation: `${operation}: this build / the build in ${BASELINE}`,
    batch: shape.label,
    'keywarden items/s': ours.best,
    'naive items/s': before.best,
    'echo floor items/s': '',
    'vs naive': ours.best / before.best,
    'vs echo': '',
    'ranges (keywarden, naive, echo)': `${rangeText(ours)}, ${rangeText(before)}`,
  };
}

function row(operation: string, shape: Shape, m: Record<'ours' | 'naive' | 'echo', Measured>): Row {
  return {
    operation,
    batch: shape.label,
    'keywarden items/s': m.ours.best,
    'naive items/s': m.naive.best,
    'echo floor items/s': m.echo.best,
    'vs naive': m.ours.best / m.naive.best,
    'vs echo': m.ours.best / m.echo.best,
    'ranges (keywarden, naive, echo)': `${rangeText(m.ours)}, ${rangeText(m.naive)}, ${rangeText(m.echo)}`,
  };
}

/**
 * Batch encrypt 1,000 × 64 B, every answer parsed, against plain koa with and without per-item
 * createCipheriv; beside it each server's CPU time per request, which a shared machine moves far
 * less than it moves requests per second.
 */
async function againstUserFloor(server: BenchServer, baseline: BenchServer | undefined): Promise<Row[]> {
  const shape = SHAPES[0]!;
  const body = JSON.stringify({ batch_input: Array.from({ length: shape.items }, () => ({ plaintext: randomBytes(shape.bytes).toString('base64') })) });
  const encrypt = await startHelper('naive-koa.js', '/encrypt');
  const echo = await startHelper('naive-koa.js', '/echo');
  const cpu: Record<string, number[]> = {};
  try {
    const items = (cell: string, url: string, headers: Record<string, string>, serverPid: number, seconds: number) => async () => {
      const result = await parsingLoad(url, { body, headers, connections: CONNECTIONS, seconds, serverPid });
      (cpu[cell] ??= []).push(result.serverCpuUs!);
      return result.requestsPerSecond * shape.items;
    };
    const cells = (seconds: number) => {
      const all: Record<string, () => Promise<number>> = {
        ours: items('ours', `${server.address}/v1/transit/encrypt/bench`, { 'X-Vault-Token': server.token }, server.child.pid!, seconds),
        naive: items('naive', encrypt.url, {}, encrypt.pid, seconds),
        echo: items('echo', echo.url, {}, echo.pid, seconds),
      };
      if (baseline) all.before = items('before', `${baseline.address}/v1/transit/encrypt/bench`, { 'X-Vault-Token': baseline.token }, baseline.child.pid!, seconds);
      return all;
    };
    const m = await interleaved(cells, DURATION_S);
    // The lowest of the measured rounds (the warm-up's figure, the first, is left out).
    const lowest = (cell: string) => Math.min(...cpu[cell]!.slice(1));
    const range = (cell: string) => `${lowest(cell).toFixed(0)}–${Math.max(...cpu[cell]!.slice(1)).toFixed(0)}`;
    const rows: Row[] = [
      row('encrypt, parsing client (naive and echo: plain koa outside the pipeline)', shape, { ours: m.ours!, naive: m.naive!, echo: m.echo! }),
      {
        operation: 'server CPU per request, µs (lower is better; ratios: theirs / ours)',
        batch: shape.label,
        'keywarden items/s': lowest('ours'),
        'naive items/s': lowest('naive'),
        'echo floor items/s': lowest('echo'),
        'vs naive': lowest('naive') / lowest('ours'),
        'vs echo': lowest('echo') / lowest('ours'),
        'ranges (keywarden, naive, echo)': `${range('ours')}, ${range('naive')}, ${range('echo')}`,
      },
    ];
    if (m.before) {
      rows.push(baselineRow('encrypt, parsing client', shape, m.ours!, m.before), {
        operation: `server CPU per request, µs: the build in ${BASELINE} / this build (lower is better for ours)`,
        batch: shape.label,
        'keywarden items/s': lowest('ours'),
        'naive items/s': lowest('before'),
        'echo floor items/s': '',
        'vs naive': lowest('before') / lowest('ours'),
        'vs echo': '',
        'ranges (keywarden, naive, echo)': `${range('ours')}, ${range('before')}`,
      });
    }
    return rows;
  } finally {
    encrypt.stop();
    echo.stop();
  }
}

/**
 * What a rate-limit quota that does not apply costs a request: single-item encrypt on one server,
 * in interleaved rounds with a quota on another mount (the floor) and with none (docs/quotas.md).
 */
async function quotaCost(server: BenchServer): Promise<Row> {
  const body = JSON.stringify({ plaintext: randomBytes(64).toString('base64') });
  const cell = (quota: boolean) => async (seconds: number) => {
    if (quota) await server.request('POST', 'sys/quotas/rate-limit/unrelated', { path: 'floor/', rate: 1000 });
    else await server.request('DELETE', 'sys/quotas/rate-limit/unrelated');
    return itemsPerSecond(server, 'transit/encrypt/bench', body, 1, seconds);
  };
  const m = await interleaved((seconds) => ({ with: () => cell(true)(seconds), without: () => cell(false)(seconds) }), DURATION_S);
  await server.request('DELETE', 'sys/quotas/rate-limit/unrelated');
  return {
    operation: 'encrypt, requests/s: with a rate-limit quota on another mount / with none',
    batch: '1 × 64 B',
    'keywarden items/s': m.with!.best,
    'naive items/s': m.without!.best,
    'echo floor items/s': '',
    'vs naive': m.with!.best / m.without!.best,
    'vs echo': '',
    'ranges (keywarden, naive, echo)': `${rangeText(m.with!)}, ${rangeText(m.without!)}`,
  };
}

/** A server with the floor mount and the key every cell uses; `root` is the checkout whose build runs (default this one). */
async function startTarget(root?: string): Promise<BenchServer> {
  return startBenchServer(root, root ? process.env.BENCH_BASELINE_NODE : undefined, async (server) => {
    await server.request('POST', 'sys/mounts/floor', { type: 'bench-floor' });
    await server.request('POST', 'transit/keys/bench');
  });
}

async function main(): Promise<void> {
  const server = await startTarget();
  let baseline: BenchServer | undefined;
  try {
    // Inside the try: this build's server is stopped if the baseline's fails to start.
    baseline = BASELINE ? await startTarget(BASELINE) : undefined;
    const rows: Row[] = [];
    for (const shape of SHAPES) {
      const batch = Array.from({ length: shape.items }, () => ({ plaintext: randomBytes(shape.bytes).toString('base64') }));
      const encryptBody = JSON.stringify({ batch_input: batch });
      const encrypted = await server.request('POST', 'transit/encrypt/bench', { batch_input: batch });
      const decryptBody = JSON.stringify({ batch_input: encrypted.data.batch_results.map((r: { ciphertext: string }) => ({ ciphertext: r.ciphertext })) });
      const naiveCiphertexts = await server.request('POST', 'floor/naive/bench', { batch_input: batch });
      const naiveDecryptBody = JSON.stringify({
        batch_input: naiveCiphertexts.data.batch_results.map((r: { ciphertext: string }) => ({ ciphertext: r.ciphertext })),
      });

      const encCells: Record<string, readonly [BenchServer, string, string]> = {
        echo: [server, 'floor/echo/bench', encryptBody],
        naive: [server, 'floor/naive/bench', encryptBody],
        ours: [server, 'transit/encrypt/bench', encryptBody],
      };
      if (baseline) encCells.before = [baseline, 'transit/encrypt/bench', encryptBody];
      const enc = await interleaved((seconds) => measure(encCells, shape.items, seconds), DURATION_S);
      rows.push(row('encrypt', shape, { ours: enc.ours!, naive: enc.naive!, echo: enc.echo! }));
      if (enc.before) rows.push(baselineRow('encrypt', shape, enc.ours!, enc.before));

      const decCells: Record<string, readonly [BenchServer, string, string]> = {
        naive: [server, 'floor/naive-decrypt/bench', naiveDecryptBody],
        ours: [server, 'transit/decrypt/bench', decryptBody],
        echo: [server, 'floor/echo-decrypt/bench', decryptBody],
      };
      // The baseline server decrypts ciphertexts of its own key.
      if (baseline) {
        const sealed = await baseline.request('POST', 'transit/encrypt/bench', { batch_input: batch });
        decCells.before = [baseline, 'transit/decrypt/bench', JSON.stringify({ batch_input: sealed.data.batch_results.map((r: { ciphertext: string }) => ({ ciphertext: r.ciphertext })) })];
      }
      const dec = await interleaved((seconds) => measure(decCells, shape.items, seconds), DURATION_S);
      rows.push(row('decrypt', shape, { ours: dec.ours!, naive: dec.naive!, echo: dec.echo! }));
      if (dec.before) rows.push(baselineRow('decrypt', shape, dec.ours!, dec.before));
    }
    rows.push(...(await againstUserFloor(server, baseline)));
    rows.push(await quotaCost(server));
    report('transit-http', rows, [
      `${CONNECTIONS} connections, ${DURATION_S} s per cell after a ${WARM_UP_S} s warm-up, best of ${ROUNDS} interleaved rounds (the range beside it), ` +
        'one server process (dev mode, LevelDB) on this machine; vs naive > 1 means faster than per-item createCipheriv; ' +
        'vs echo is the share of the no-crypto ceiling reached.',
      'The "parsing client" rows: the same batch encrypt read and JSON-parsed by the client, against a naive koa server outside ' +
        'our pipeline (per-item createCipheriv; targets: ≥ 4×) and its no-crypto twin (target: ≥ 0.5), interleaved in this run.',
      'The quota row: the same server with a rate-limit quota on another mount (first column) and without one (second column), ' +
        'interleaved; "vs naive" is their ratio (1 means no measurable cost).',
      ...(BASELINE ? [`Rows "this build / the build in …": the figure of this build, then that of the build in ${BASELINE} (in the naive column), interleaved in the same rounds; "vs naive" is their ratio.`] : []),
    ]);
  } finally {
    await server.stop();
    await baseline?.stop();
  }
}

await main();
