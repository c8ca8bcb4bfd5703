/**
 * Transit beyond plain batch encryption, over HTTP against the real server: derived-key batch
 * encrypt (a different context per item) beside the naive floors (per-item HKDF + createCipheriv,
 * and per-item createCipheriv under one key) and the echo floor; single-item encrypt and decrypt
 * at 64 connections beside a bare koa JSON echo and Keywarden's HTTP layer alone
 * (bench/lib/app-echo.ts); HMAC, CMAC (beside a per-item node:crypto CMAC), sign (ed25519,
 * ecdsa-p256, ed25519ph) and verify batches; sign and
 * verify batches of the post-quantum keys, one row per parameter set (ml-dsa, the hybrid pairs,
 * slh-dsa), on this build only; encrypt and decrypt batches under the key-encapsulation keys
 * (ml-kem 768 and 1024, mlkem768-x25519) beside rsa-2048's OAEP, the other public-key encryption;
 * start-up time and resident memory after the load. Ratios measured in this one run.
 *
 * With BENCH_BASELINE=<directory of another built checkout> (a git worktree of an older commit,
 * built), the derived-key batch, the single-item cells and the HMAC, sign and verify batches also
 * run against a server of that build, interleaved with this one's, and a row per figure gives
 * this build over that one: before and after measured in one run under the same load.
 */
import { createHash, randomBytes } from 'node:crypto';
import { report, type Row } from './lib/report.js';
import { startBenchServer, type BenchServer } from './lib/server.js';
import { startHelper } from './lib/helper-process.js';
import { sequentialLatency } from './lib/latency.js';
import { interleaved, load, rangeText, rssMb, ROUNDS, WARM_UP_S, type LoadResult, type Measured } from './lib/load.js';

const SECONDS = Number(process.env.BENCH_DURATION ?? 5);
/** The KEM rows' batch size and shortest cell. */
const KEM_BATCH = 10;
const KEM_SECONDS = 10;
const BASELINE = process.env.BENCH_BASELINE;

/** A row of this build's figure over the baseline build's (BENCH_BASELINE), both measured in interleaved rounds. */
function againstBaseline(measure: string, ours: Measured, before: Measured): Row {
  return compared(measure, ours, `the build in ${BASELINE}`, before);
}

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

/** A server with the keys every cell uses; `root` is the checkout whose build runs (default this one). */
async function startTarget(root?: string): Promise<BenchServer> {
  return startBenchServer(root, root ? process.env.BENCH_BASELINE_NODE : undefined, async (server) => {
    await server.request('POST', 'sys/mounts/floor', { type: 'bench-floor' });
    await server.request('POST', 'transit/keys/derived', { derived: true });
    await server.request('POST', 'transit/keys/plain');
    await server.request('POST', 'transit/keys/ed', { type: 'ed25519' });
    await server.request('POST', 'transit/keys/ec', { type: 'ecdsa-p256' });
    await server.request('POST', 'transit/keys/cmac', { type: 'aes256-cmac' });
  });
}

async function main(): Promise<void> {
  const server = await startTarget();
  let baseline: BenchServer | undefined;
  const rows: Row[] = [];
  try {
    // Inside the try: this build's server is stopped if the baseline's fails to start.
    baseline = BASELINE ? await startTarget(BASELINE) : undefined;
    const headers = { 'X-Vault-Token': server.token };
    const url = (p: string) => `${server.address}/v1/${p}`;
    // The baseline server has a token of its own; each cell sends its server's.
    const baseHeaders = baseline ? { 'X-Vault-Token': baseline.token } : headers;
    const baseUrl = (p: string) => `${baseline?.address}/v1/${p}`;

    // Derived-key batch: 1,000 × 64 B, each item with its own context. The naive floor for it
    // derives each item's key with hkdfSync before its createCipheriv; the plain naive floor (one
    // key, no derivation) is shown too, as a stricter comparison.
    const derivedBody = JSON.stringify({
      batch_input: Array.from({ length: 1000 }, (_, i) => ({ plaintext: randomBytes(64).toString('base64'), context: Buffer.from(`tenant-${i}`).toString('base64') })),
    });
    const itemsPerSecond = async (p: string, seconds = SECONDS) => (await load(url(p), { body: derivedBody, headers, connections: 4, seconds })).requestsPerSecond * 1000;
    const derivedCells = { ours: 'transit/encrypt/derived', naiveDerived: 'floor/naive-derived/x', naive: 'floor/naive/x', echo: 'floor/echo/x' } as const;
    const cellsOf = (seconds: number) => {
      const cells: Record<string, () => Promise<number>> = Object.fromEntries(Object.entries(derivedCells).map(([name, p]) => [name, () => itemsPerSecond(p, seconds)]));
      if (baseline) cells.before = async () => (await load(baseUrl(derivedCells.ours), { body: derivedBody, headers: baseHeaders, connections: 4, seconds })).requestsPerSecond * 1000;
      return cells;
    };
    const d = await interleaved(cellsOf, SECONDS);
    const echo = d.echo!.best;
    const derived = 'derived-key batch encrypt 1,000 × 64 B (items/s)';
    rows.push(compared(derived, d.ours!, 'naive per-item (hkdfSync + createCipheriv)', d.naiveDerived!));
    rows.push(compared(derived, d.ours!, 'naive per-item, one key (no derivation)', d.naive!));
    rows.push(compared(derived, d.ours!, 'echo floor', d.echo!));
    if (d.before) rows.push(againstBaseline(derived, d.ours!, d.before));

    // Single-item encrypt at 64 connections vs a bare koa JSON echo; beside them Keywarden's HTTP
    // layer alone (bench/lib/app-echo.ts: the same koa app, router, LIST wrapper, body reading and
    // envelope, with a host that answers at once), which bounds what the full pipeline can reach.
    const plaintext = randomBytes(64).toString('base64');
    const single = JSON.stringify({ plaintext });
    // Each server decrypts a ciphertext of its own key.
    const decryptBody = async (target: BenchServer) => JSON.stringify({ ciphertext: (await target.request('POST', 'transit/encrypt/plain', { plaintext })).data.ciphertext });
    const singleDecrypt = await decryptBody(server);
    const baseDecrypt = baseline ? await decryptBody(baseline) : '';
    const koa = await startHelper('koa-echo.js', '/');
    const app = await startHelper('app-echo.js', '/v1/transit/encrypt/plain');
    try {
      // Each cell also notes its server's CPU time per request: on a shared machine it moves far
      // less than requests per second, so its ratios say more about what a change did.
      const cpu: Record<string, number[]> = {};
      const noted = (cell: string, result: LoadResult) => {
        (cpu[cell] ??= []).push(result.serverCpuUs!);
        return result.requestsPerSecond;
      };
      const singleCells = (seconds: number) => {
        // Every cell is sent the same request, token header included: parsing it costs each server the same.
        const cells: Record<string, () => Promise<number>> = {
          bare: async () => noted('bare', await load(koa.url, { body: single, headers, connections: 64, seconds, serverPid: koa.pid })),
          layer: async () => noted('layer', await load(app.url, { body: single, headers, connections: 64, seconds, serverPid: app.pid })),
          ours: async () => noted('ours', await load(url('transit/encrypt/plain'), { body: single, headers, connections: 64, seconds, serverPid: server.child.pid! })),
          oursDecrypt: async () => noted('oursDecrypt', await load(url('transit/decrypt/plain'), { body: singleDecrypt, headers, connections: 64, seconds, serverPid: server.child.pid! })),
        };
        if (baseline) {
          const pid = baseline.child.pid!;
          cells.before = async () => noted('before', await load(baseUrl('transit/encrypt/plain'), { body: single, headers: baseHeaders, connections: 64, seconds, serverPid: pid }));
          cells.beforeDecrypt = async () => noted('beforeDecrypt', await load(baseUrl('transit/decrypt/plain'), { body: baseDecrypt, headers: baseHeaders, connections: 64, seconds, serverPid: pid }));
        }
        return cells;
      };
      const s = await interleaved(singleCells, SECONDS);
      rows.push(compared('single-item encrypt, 64 connections (req/s)', s.ours!, 'bare koa echo', s.bare!));
      rows.push(compared('single-item encrypt, 64 connections (req/s)', s.ours!, "Keywarden's HTTP layer alone", s.layer!));
      rows.push(compared('single-item decrypt, 64 connections (req/s)', s.oursDecrypt!, 'bare koa echo', s.bare!));
      rows.push(compared('single-item decrypt, 64 connections (req/s)', s.oursDecrypt!, "Keywarden's HTTP layer alone", s.layer!));
      rows.push(compared("Keywarden's HTTP layer alone, a host that answers at once (req/s)", s.layer!, 'bare koa echo', s.bare!));
      if (s.before) rows.push(againstBaseline('single-item encrypt, 64 connections (req/s)', s.ours!, s.before));
      if (s.beforeDecrypt) rows.push(againstBaseline('single-item decrypt, 64 connections (req/s)', s.oursDecrypt!, s.beforeDecrypt));
      // The lowest of the measured rounds (the warm-up's figure is the first, and left out); lower is better, so the ratio is theirs over ours.
      const cpuOf = (cell: string) => {
        const measured = cpu[cell]!.slice(1);
        return { best: Math.min(...measured), low: Math.max(...measured) };
      };
      const cpuComparisons: [string, string, string, string][] = [
        ['encrypt', 'ours', 'bare koa echo', 'bare'],
        ['encrypt', 'ours', "Keywarden's HTTP layer alone", 'layer'],
        ['decrypt', 'oursDecrypt', 'bare koa echo', 'bare'],
        ['decrypt', 'oursDecrypt', "Keywarden's HTTP layer alone", 'layer'],
      ];
      if (baseline) cpuComparisons.push(['encrypt', 'ours', `the build in ${BASELINE}`, 'before'], ['decrypt', 'oursDecrypt', `the build in ${BASELINE}`, 'beforeDecrypt']);
      for (const [operation, cell, against, other] of cpuComparisons) {
        const ours = cpuOf(cell);
        const theirs = cpuOf(other);
        rows.push({
          measure: `single-item ${operation}, server CPU per request (µs; ratio: theirs / ours)`,
          keywarden: ours.best,
          'compared with': theirs.best,
          against,
          ratio: theirs.best / ours.best,
          'ranges (keywarden, compared)': `${ours.best.toFixed(0)}–${ours.low.toFixed(0)}, ${theirs.best.toFixed(0)}–${theirs.low.toFixed(0)}`,
        });
      }

      // Latency of one client sending one request at a time (bench/lib/latency.ts): p50 and p99 in
      // ms, lower is better; interleaved rounds, the lowest of each kept, beside the bare echo's.
      const latencyCells = (seconds: number) => {
        const cells: Record<string, () => Promise<number>> = {
          oursP50: async () => -(await sequentialLatency(url('transit/encrypt/plain'), { body: single, headers, seconds })).p50Ms,
          bareP50: async () => -(await sequentialLatency(koa.url, { body: single, headers, seconds })).p50Ms,
          oursP99: async () => -(await sequentialLatency(url('transit/encrypt/plain'), { body: single, headers, seconds })).p99Ms,
          bareP99: async () => -(await sequentialLatency(koa.url, { body: single, headers, seconds })).p99Ms,
        };
        if (baseline) {
          cells.beforeP50 = async () => -(await sequentialLatency(baseUrl('transit/encrypt/plain'), { body: single, headers: baseHeaders, seconds })).p50Ms;
          cells.beforeP99 = async () => -(await sequentialLatency(baseUrl('transit/encrypt/plain'), { body: single, headers: baseHeaders, seconds })).p99Ms;
        }
        return cells;
      };
      const one = await interleaved(latencyCells, SECONDS);
      const ms = (m: Measured) => `${(-m.best).toFixed(3)}–${(-m.low).toFixed(3)}`;
      const latencyRows: [string, Measured, string, Measured][] = [
        ['p50', one.oursP50!, 'bare koa echo', one.bareP50!],
        ['p99', one.oursP99!, 'bare koa echo', one.bareP99!],
      ];
      if (baseline) latencyRows.push(['p50', one.oursP50!, `the build in ${BASELINE}`, one.beforeP50!], ['p99', one.oursP99!, `the build in ${BASELINE}`, one.beforeP99!]);
      for (const [quantile, ours, against, theirs] of latencyRows) {
        rows.push({
          measure: `single-item encrypt, 1 connection, ${quantile} latency (ms)`,
          keywarden: -ours.best,
          'compared with': -theirs.best,
          against,
          ratio: ours.best / theirs.best,
          'ranges (keywarden, compared)': `${ms(ours)}, ${ms(theirs)}`,
        });
      }
    } finally {
      koa.stop();
      app.stop();
    }

    // HMAC, sign and verify batches of 1,000 × 64 B: one load on this build, or, with a baseline,
    // interleaved rounds on both builds.
    const inputs = Array.from({ length: 1000 }, () => ({ input: randomBytes(64).toString('base64') }));
    const inputBody = JSON.stringify({ batch_input: inputs });
    const batchFigure = async (measure: string, p: string, body: string, baseBody = body): Promise<void> => {
      const rate = async (target: 'ours' | 'before', seconds: number) =>
        (await load(target === 'ours' ? url(p) : baseUrl(p), { body: target === 'ours' ? body : baseBody, headers: target === 'ours' ? headers : baseHeaders, connections: 4, seconds })).requestsPerSecond * 1000;
      if (!baseline) {
        const ours = await rate('ours', SECONDS);
        rows.push({ measure, keywarden: ours, 'compared with': echo, against: 'echo floor', ratio: ours / echo });
        return;
      }
      const m = await interleaved((seconds) => ({ ours: () => rate('ours', seconds), before: () => rate('before', seconds) }), SECONDS);
      rows.push({ measure, keywarden: m.ours.best, 'compared with': echo, against: 'echo floor', ratio: m.ours.best / echo });
      rows.push(againstBaseline(measure, m.ours, m.before));
    };
    await batchFigure('HMAC-SHA-256 batch 1,000 × 64 B (items/s)', 'transit/hmac/plain', inputBody);
    // AES-256-CMAC (@noble/ciphers) beside the same batch CMACed per item with node:crypto's AES
    // (floor/naive-cmac), both over HTTP, interleaved.
    const cmacCells = await interleaved(
      (seconds) => ({
        ours: async () => (await load(url('transit/cmac/cmac'), { body: inputBody, headers, connections: 4, seconds })).requestsPerSecond * 1000,
        naive: async () => (await load(url('floor/naive-cmac/x'), { body: inputBody, headers, connections: 4, seconds })).requestsPerSecond * 1000,
      }),
      SECONDS,
    );
    rows.push(compared('AES-256-CMAC batch 1,000 × 64 B (items/s)', cmacCells.ours!, 'naive per-item node:crypto AES-ECB + AES-CBC CMAC', cmacCells.naive!));
    // Each server verifies signatures made by its own key.
    const verifyBodyOf = async (target: BenchServer, key: string) => {
      const signed = await target.request('POST', `transit/sign/${key}`, { batch_input: inputs });
      return JSON.stringify({ batch_input: inputs.map((item, i) => ({ ...item, signature: signed.data.batch_results[i].signature })) });
    };
    for (const key of ['ed', 'ec']) {
      const label = key === 'ed' ? 'ed25519' : 'ecdsa-p256';
      await batchFigure(`sign ${label} batch (items/s)`, `transit/sign/${key}`, inputBody);
      await batchFigure(`verify ${label} batch (items/s)`, `transit/verify/${key}`, await verifyBodyOf(server, key), baseline ? await verifyBodyOf(baseline, key) : undefined);
    }
    // Ed25519ph (@noble/curves, in JavaScript) of 100 SHA-512 digests, beside the pure ed25519 rows
    // above (node:crypto): a batch of 1,000 can outlast a cell on a loaded machine and count nothing.
    const digests = inputs.slice(0, 100).map(({ input }) => ({ input: createHash('sha512').update(Buffer.from(input, 'base64')).digest('base64') }));
    const phSigned = await server.request('POST', 'transit/sign/ed/sha2-512', { batch_input: digests, prehashed: true });
    const phVerifyBody = JSON.stringify({ prehashed: true, batch_input: digests.map((item, i) => ({ ...item, signature: phSigned.data.batch_results[i].signature })) });
    const ph = async (p: string, body: string) => (await load(url(p), { body, headers, connections: 4, seconds: SECONDS })).requestsPerSecond * digests.length;
    const phSign = await ph('transit/sign/ed/sha2-512', JSON.stringify({ prehashed: true, batch_input: digests }));
    rows.push({ measure: 'sign ed25519ph batch 100 × SHA-512 digest (items/s)', keywarden: phSign, 'compared with': echo, against: 'echo floor', ratio: phSign / echo });
    const phVerify = await ph('transit/verify/ed/sha2-512', phVerifyBody);
    rows.push({ measure: 'verify ed25519ph batch 100 × SHA-512 digest (items/s)', keywarden: phVerify, 'compared with': echo, against: 'echo floor', ratio: phVerify / echo });

    // Post-quantum keys, this build only (an older build has none), in items per second. The
    // SLH-DSA "s" sets take seconds a signature: their sign figure is one batch of 4, one item
    // per thread of the pool, timed alone; a load of them would queue minutes of work.
    const PQ_KEYS: readonly [string, Record<string, string>, number][] = [
      ...['44', '65', '87'].map((set): [string, Record<string, string>, number] => [`ml-dsa-${set}`, { type: 'ml-dsa', parameter_set: set }, 100]),
      ...(
        [
          ['44', 'ed25519'],
          ['44', 'ecdsa-p256'],
          ['65', 'ecdsa-p256'],
          ['65', 'ecdsa-p384'],
          ['65', 'ed25519'],
          ['87', 'ecdsa-p384'],
          ['87', 'ecdsa-p521'],
        ] as const
      ).map(([set, ec]): [string, Record<string, string>, number] => [
        `hybrid ML-DSA-${set} + ${ec}`,
        { type: 'hybrid', parameter_set: set, hybrid_key_type_pqc: 'ml-dsa', hybrid_key_type_ec: ec },
        100,
      ]),
      ...['sha2', 'shake'].flatMap((hash) =>
        ['128', '192', '256'].flatMap((level) =>
          (['s', 'f'] as const).map((speed): [string, Record<string, string>, number] => {
            const set = `slh-dsa-${hash}-${level}${speed}`;
            return [set, { type: 'slh-dsa', parameter_set: set }, 4];
          }),
        ),
      ),
    ];
    for (const [label, create, size] of PQ_KEYS) {
      const key = `pq-${label.replace(/[^a-z0-9-]+/gi, '-')}`;
      await server.request('POST', `transit/keys/${key}`, create);
      const items = inputs.slice(0, size);
      const started = process.hrtime.bigint();
      const signed = await server.request('POST', `transit/sign/${key}`, { batch_input: items });
      const aloneRate = size / (Number(process.hrtime.bigint() - started) / 1e9);
      const pqRate = async (p: string, body: string) => (await load(url(p), { body, headers, connections: 4, seconds: SECONDS })).requestsPerSecond * size;
      const slow = /^slh-dsa-.*s$/.test(label);
      const signRate = slow ? aloneRate : await pqRate(`transit/sign/${key}`, JSON.stringify({ batch_input: items }));
      const how = slow ? `one batch of ${size}, alone` : `batch of ${size}`;
      rows.push({ measure: `sign ${label}, ${how} (items/s)`, keywarden: signRate, 'compared with': echo, against: 'echo floor', ratio: signRate / echo });
      const verifyBody = JSON.stringify({ batch_input: items.map((item, i) => ({ ...item, signature: signed.data.batch_results[i].signature })) });
      const verifyRate = await pqRate(`transit/verify/${key}`, verifyBody);
      rows.push({ measure: `verify ${label}, batch of ${size} (items/s)`, keywarden: verifyRate, 'compared with': echo, against: 'echo floor', ratio: verifyRate / echo });
    }

    // Key-encapsulation keys (docs/transit-kem.md): batches of 10 × 64 B sealed to the public key
    // and opened, beside rsa-2048 (OAEP, SHA-256). This build only: a baseline has no such keys.
    // Batches of 100 in cells as long as the other rows' answered none within the cell on a loaded
    // machine (the rows came out 0), so batches are small and cells at least KEM_SECONDS.
    const kemKeys = [
      ['kem768', { type: 'ml-kem' }, 'ml-kem 768'],
      ['kem1024', { type: 'ml-kem', parameter_set: '1024' }, 'ml-kem 1024'],
      ['xwing', { type: 'mlkem768-x25519' }, 'mlkem768-x25519'],
      ['rsa', { type: 'rsa-2048' }, 'rsa-2048 (OAEP)'],
    ] as const;
    const kemItems = Array.from({ length: KEM_BATCH }, () => ({ plaintext: randomBytes(64).toString('base64') }));
    const kemRate = async (p: string, body: string) => (await load(url(p), { body, headers, connections: 4, seconds: Math.max(SECONDS, KEM_SECONDS) })).requestsPerSecond * KEM_BATCH;
    const kemFigures: Record<string, { encrypt: number; decrypt: number }> = {};
    for (const [key, settings, label] of kemKeys) {
      await server.request('POST', `transit/keys/${key}`, settings);
      const sealed = await server.request('POST', `transit/encrypt/${key}`, { batch_input: kemItems });
      const decryptBody = JSON.stringify({ batch_input: sealed.data.batch_results.map((r: { ciphertext: string }) => ({ ciphertext: r.ciphertext })) });
      kemFigures[label] = { encrypt: await kemRate(`transit/encrypt/${key}`, JSON.stringify({ batch_input: kemItems })), decrypt: await kemRate(`transit/decrypt/${key}`, decryptBody) };
    }
    const rsaFigures = kemFigures['rsa-2048 (OAEP)']!;
    for (const [, , label] of kemKeys.slice(0, 3)) {
      for (const operation of ['encrypt', 'decrypt'] as const) {
        const ours = kemFigures[label]![operation];
        rows.push({ measure: `${operation} ${label} batch ${KEM_BATCH} × 64 B (items/s)`, keywarden: ours, 'compared with': rsaFigures[operation], against: `${operation} rsa-2048 (OAEP) batch`, ratio: ours / rsaFigures[operation] });
      }
    }

    rows.push({ measure: 'start-up to unsealed and serving (ms)', keywarden: server.startupMs, 'compared with': 1000, against: 'target', ratio: server.startupMs / 1000 });
    const rss = rssMb(server.child.pid!);
    rows.push({ measure: 'RSS after the load (MB)', keywarden: rss, 'compared with': 200, against: 'target', ratio: rss / 200 });
  } finally {
    await server.stop();
    await baseline?.stop();
  }
  report('transit-ops', rows, [
    `${SECONDS} s per cell; batch cells use 4 connections; derived-key and single-item cells: best of ${ROUNDS} interleaved rounds after a ${WARM_UP_S} s warm-up (the range beside it); one server process (dev mode, LevelDB)` +
      (BASELINE ? `, and one of the build in ${BASELINE}, whose cells (HMAC, sign and verify too) are interleaved with this build's.` : '.'),
  ]);
}

await main();
