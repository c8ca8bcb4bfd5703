/**
 * Transit beyond plain batch encryption, over HTTP against the real server: derived-key batch
 * encrypt (a different context per item) beside the naive floors (per-item HKDF + createCipheriv,
 * and per-item createCipheriv under one key) and the echo floor; single-item encrypt at
 * 64 connections beside a bare koa JSON echo and Keywarden's HTTP layer alone (bench/lib/app-echo.ts);
 * HMAC, sign (ed25519, ecdsa-p256) and verify batches;
 * start-up time and resident memory after the load. Ratios measured in this one run.
 */
import { randomBytes } from 'node:crypto';
import { report, type Row } from './lib/report.js';
import { startBenchServer } from './lib/server.js';
import { startHelper } from './lib/helper-process.js';
import { sequentialLatency } from './lib/latency.js';
import { interleaved, load, rangeText, rssMb, ROUNDS, WARM_UP_S, type LoadResult, type Measured } from './lib/load.js';

const SECONDS = Number(process.env.BENCH_DURATION ?? 5);

/** A row of one of our figures against a floor's, both measured in interleaved rounds, with their ranges. */
function compared(measure: string, ours: Measured, against: string, floor: Measured): Row {
  return {
    measure,
    keywarden: ours.best,
    'compared with': floor.best,
    against,
    ratio: ours.best / floor.best,
    'ranges (keywarden, compared)': `${rangeText(ours)}, ${rangeText(floor)}`,
  };
}

async function main(): Promise<void> {
  const server = await startBenchServer();
  const rows: Row[] = [];
  try {
    const headers = { 'X-Vault-Token': server.token };
    const url = (p: string) => `${server.address}/v1/${p}`;
    await server.request('POST', 'sys/mounts/floor', { type: 'bench-floor' });
    await server.request('POST', 'transit/keys/derived', { derived: true });
    await server.request('POST', 'transit/keys/plain');
    await server.request('POST', 'transit/keys/ed', { type: 'ed25519' });
    await server.request('POST', 'transit/keys/ec', { type: 'ecdsa-p256' });

    // Derived-key batch: 1,000 × 64 B, each item with its own context. The naive floor for it
    // derives each item's key with hkdfSync before its createCipheriv; the plain naive floor (one
    // key, no derivation) is shown too, as a stricter comparison.
    const derivedBody = JSON.stringify({
      batch_input: Array.from({ length: 1000 }, (_, i) => ({ plaintext: randomBytes(64).toString('base64'), context: Buffer.from(`tenant-${i}`).toString('base64') })),
    });
    const itemsPerSecond = async (p: string, seconds = SECONDS) => (await load(url(p), { body: derivedBody, headers, connections: 4, seconds })).requestsPerSecond * 1000;
    const derivedCells = { ours: 'transit/encrypt/derived', naiveDerived: 'floor/naive-derived/x', naive: 'floor/naive/x', echo: 'floor/echo/x' } as const;
    const cellsOf = (seconds: number) =>
      Object.fromEntries(Object.entries(derivedCells).map(([name, p]) => [name, () => itemsPerSecond(p, seconds)])) as Record<keyof typeof derivedCells, () => Promise<number>>;
    const d = await interleaved(cellsOf, SECONDS);
    const echo = d.echo.best;
    const derived = 'derived-key batch encrypt 1,000 × 64 B (items/s)';
    rows.push(compared(derived, d.ours, 'naive per-item (hkdfSync + createCipheriv)', d.naiveDerived));
    rows.push(compared(derived, d.ours, 'naive per-item, one key (no derivation)', d.naive));
    rows.push(compared(derived, d.ours, 'echo floor', d.echo));

    // Single-item encrypt at 64 connections vs a bare koa JSON echo; beside them Keywarden's HTTP
    // layer alone (bench/lib/app-echo.ts: the same koa app, router, LIST wrapper, body reading and
    // envelope, with a host that answers at once), which bounds what the full pipeline can reach.
    const single = JSON.stringify({ plaintext: randomBytes(64).toString('base64') });
    const koa = await startHelper('koa-echo.js', '/');
    const app = await startHelper('app-echo.js', '/v1/transit/encrypt/plain');
    try {
      // Each cell also notes its server's CPU time per request: on a shared machine it moves far
      // less than requests per second, so its ratios say more about what a change did.
      const cpu: Record<'bare' | 'layer' | 'ours', number[]> = { bare: [], layer: [], ours: [] };
      const noted = (cell: keyof typeof cpu, result: LoadResult) => {
        cpu[cell].push(result.serverCpuUs!);
        return result.requestsPerSecond;
      };
      const singleCells = (seconds: number) => ({
        // Every cell is sent the same request, token header included: parsing it costs each server the same.
        bare: async () => noted('bare', await load(koa.url, { body: single, headers, connections: 64, seconds, serverPid: koa.pid })),
        layer: async () => noted('layer', await load(app.url, { body: single, headers, connections: 64, seconds, serverPid: app.pid })),
        ours: async () => noted('ours', await load(url('transit/encrypt/plain'), { body: single, headers, connections: 64, seconds, serverPid: server.child.pid! })),
      });
      const s = await interleaved(singleCells, SECONDS);
      rows.push(compared('single-item encrypt, 64 connections (req/s)', s.ours, 'bare koa echo', s.bare));
      rows.push(compared('single-item encrypt, 64 connections (req/s)', s.ours, "Keywarden's HTTP layer alone", s.layer));
      rows.push(compared("Keywarden's HTTP layer alone, a host that answers at once (req/s)", s.layer, 'bare koa echo', s.bare));
      // The lowest of the measured rounds (the warm-up's figure is the first, and left out); lower is better, so the ratio is theirs over ours.
      const cpuOf = (cell: keyof typeof cpu) => {
        const measured = cpu[cell].slice(1);
        return { best: Math.min(...measured), low: Math.max(...measured) };
      };
      for (const [against, cell] of [['bare koa echo', 'bare'], ["Keywarden's HTTP layer alone", 'layer']] as const) {
        const ours = cpuOf('ours');
        const theirs = cpuOf(cell);
        rows.push({
          measure: 'single-item encrypt, server CPU per request (µs; ratio: theirs / ours)',
          keywarden: ours.best,
          'compared with': theirs.best,
          against,
          ratio: theirs.best / ours.best,
          'ranges (keywarden, compared)': `${ours.best.toFixed(0)}–${ours.low.toFixed(0)}, ${theirs.best.toFixed(0)}–${theirs.low.toFixed(0)}`,
        });
      }

      // Latency of one client sending one request at a time (bench/lib/latency.ts): p50 and p99 in
      // ms, lower is better; interleaved rounds, the lowest of each kept, beside the bare echo's.
      const latencyCells = (seconds: number) => ({
        oursP50: async () => -(await sequentialLatency(url('transit/encrypt/plain'), { body: single, headers, seconds })).p50Ms,
        bareP50: async () => -(await sequentialLatency(koa.url, { body: single, headers, seconds })).p50Ms,
        oursP99: async () => -(await sequentialLatency(url('transit/encrypt/plain'), { body: single, headers, seconds })).p99Ms,
        bareP99: async () => -(await sequentialLatency(koa.url, { body: single, headers, seconds })).p99Ms,
      });
      const one = await interleaved(latencyCells, SECONDS);
      const ms = (m: Measured) => `${(-m.best).toFixed(3)}–${(-m.low).toFixed(3)}`;
      for (const [quantile, ours, bare] of [['p50', one.oursP50, one.bareP50], ['p99', one.oursP99, one.bareP99]] as const) {
        rows.push({
          measure: `single-item encrypt, 1 connection, ${quantile} latency (ms)`,
          keywarden: -ours.best,
          'compared with': -bare.best,
          against: 'bare koa echo',
          ratio: ours.best / bare.best,
          'ranges (keywarden, compared)': `${ms(ours)}, ${ms(bare)}`,
        });
      }
    } finally {
      koa.stop();
      app.stop();
    }

    // HMAC, sign and verify batches of 1,000 × 64 B.
    const inputs = Array.from({ length: 1000 }, () => ({ input: randomBytes(64).toString('base64') }));
    const inputBody = JSON.stringify({ batch_input: inputs });
    const hmac = (await load(url('transit/hmac/plain'), { body: inputBody, headers, connections: 4, seconds: SECONDS })).requestsPerSecond * 1000;
    rows.push({ measure: 'HMAC-SHA-256 batch 1,000 × 64 B (items/s)', keywarden: hmac, 'compared with': echo, against: 'echo floor', ratio: hmac / echo });
    for (const key of ['ed', 'ec']) {
      const signed = await server.request('POST', `transit/sign/${key}`, { batch_input: inputs });
      const verifyBody = JSON.stringify({ batch_input: inputs.map((item, i) => ({ ...item, signature: signed.data.batch_results[i].signature })) });
      const sign = (await load(url(`transit/sign/${key}`), { body: inputBody, headers, connections: 4, seconds: SECONDS })).requestsPerSecond * 1000;
      const verify = (await load(url(`transit/verify/${key}`), { body: verifyBody, headers, connections: 4, seconds: SECONDS })).requestsPerSecond * 1000;
      const label = key === 'ed' ? 'ed25519' : 'ecdsa-p256';
      rows.push({ measure: `sign ${label} batch (items/s)`, keywarden: sign, 'compared with': echo, against: 'echo floor', ratio: sign / echo });
      rows.push({ measure: `verify ${label} batch (items/s)`, keywarden: verify, 'compared with': echo, against: 'echo floor', ratio: verify / echo });
    }

    rows.push({ measure: 'start-up to unsealed and serving (ms)', keywarden: server.startupMs, 'compared with': 1000, against: 'target', ratio: server.startupMs / 1000 });
    const rss = rssMb(server.child.pid!);
    rows.push({ measure: 'RSS after the load (MB)', keywarden: rss, 'compared with': 200, against: 'target', ratio: rss / 200 });
  } finally {
    await server.stop();
  }
  report('transit-ops', rows, [
    `${SECONDS} s per cell; batch cells use 4 connections; derived-key and single-item cells: best of ${ROUNDS} interleaved rounds after a ${WARM_UP_S} s warm-up (the range beside it); one server process (dev mode, LevelDB).`,
  ]);
}

await main();
