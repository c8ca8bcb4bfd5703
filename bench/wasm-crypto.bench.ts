/**
 * Kernel benchmark of the WASM crypto core (issue 4): for item sizes 16, 64, 256, 1024 and 16384
 * bytes and batches of 1,000 items, items per second of
 *   - ours: WasmCrypto with its normal dispatch,
 *   - kernel: WasmCrypto forced onto its batch path (WASM or hybrid) for every item,
 *   - node: one node:crypto call per item (GCM with pre-generated nonces, `crypto.hash` one-shot
 *     for digests, createHmac, hkdfSync),
 *   - node (createHash): the older per-item hash API, for digests only,
 *   - noble: @noble/hashes per item (AES-GCM: @noble/ciphers is not a dependency, so n/a),
 * and the ratios ours/node and kernel/node, all measured in one run and printed as one markdown
 * table. A small second table measures batch counts 1, 4 and 16 at 64 B (the dispatcher's
 * minimum-count rule).
 *
 * Usage: node dist/bench/wasm-crypto.bench.js [name-filter ...] [--ms=N]
 *   names: gcm-seal, gcm-open, gcm-seal-keys, sha256, sha512, sha3-256, hmac-sha256, hmac-sha512,
 *   hkdf; each filter keeps the rows whose name contains it. --ms is the time per measurement
 *   (default 120 ms; the whole run takes about 25 s on 2 cores).
 */
import { createHash, randomBytes } from 'node:crypto';
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { sha3_256 } from '@noble/hashes/sha3.js';
import { WasmCrypto, type CryptoPath } from '../wasm/index.js';
import { nodeGcmOpen, nodeGcmSeal, nodeHash, nodeHkdfSha256, nodeHmac } from '../wasm/node-paths.js';

const SIZES = [16, 64, 256, 1024, 16384];
const BATCH = 1000;

/** One benchmarked primitive: how to run a whole batch each way. */
interface Case {
  readonly name: string;
  readonly fastPath: CryptoPath;
  /** Prepares inputs of `size` bytes for `count` items and returns the runners. */
  prepare(size: number, count: number): Runners;
}

interface Runners {
  ours(path?: CryptoPath): void;
  node(): void;
  nodeAlt?(): void;
  noble?(): void;
}

const args = process.argv.slice(2);
const msArg = args.find((a) => a.startsWith('--ms='));
const budgetMs = msArg === undefined ? 120 : Number(msArg.slice(5));
const filters = args.filter((a) => !a.startsWith('--'));

const wasm = await WasmCrypto.load();
const key = randomBytes(32);

function items(size: number, count: number): Buffer[] {
  return Array.from({ length: count }, () => randomBytes(size));
}

const cases: Case[] = [
  {
    name: 'gcm-seal',
    fastPath: 'hybrid',
    prepare(size, count) {
      const batch = items(size, count).map((plaintext, i) => ({ nonce: WasmCrypto.randomNonces(1)[0]!, plaintext, aad: i % 2 ? undefined : key.subarray(0, 8) }));
      return {
        ours: (path) => wasm.gcmEncryptBatch(key, batch, path === undefined ? {} : { path }),
        node: () => batch.forEach((it) => nodeGcmSeal(key, it.nonce, it.plaintext, it.aad)),
      };
    },
  },
  {
    name: 'gcm-open',
    fastPath: 'hybrid',
    prepare(size, count) {
      const sealed = items(size, count).map((plaintext) => {
        const nonce = WasmCrypto.randomNonces(1)[0]!;
        return { nonce, ciphertext: nodeGcmSeal(key, nonce, plaintext) };
      });
      return {
        ours: (path) => wasm.gcmDecryptBatch(key, sealed, path === undefined ? {} : { path }),
        node: () => sealed.forEach((it) => nodeGcmOpen(key, it.nonce, it.ciphertext)),
      };
    },
  },
  {
    name: 'gcm-seal-keys',
    fastPath: 'hybrid',
    prepare(size, count) {
      const keys = items(32, count);
      const batch = items(size, count).map((plaintext) => ({ nonce: WasmCrypto.randomNonces(1)[0]!, plaintext }));
      return {
        ours: (path) => wasm.gcmEncryptBatch(keys, batch, path === undefined ? {} : { path }),
        node: () => batch.forEach((it, i) => nodeGcmSeal(keys[i]!, it.nonce, it.plaintext)),
      };
    },
  },
  ...(['sha256', 'sha512', 'sha3-256'] as const).map((alg): Case => ({
    name: alg,
    fastPath: 'wasm',
    prepare(size, count) {
      const inputs = items(size, count);
      const noble = alg === 'sha256' ? sha256 : alg === 'sha512' ? sha512 : sha3_256;
      return {
        ours: (path) => wasm.hashBatch(alg, inputs, path === undefined ? {} : { path }),
        node: () => inputs.forEach((m) => nodeHash(alg, m)),
        nodeAlt: () => inputs.forEach((m) => createHash(alg).update(m).digest()),
        noble: () => inputs.forEach((m) => noble(m)),
      };
    },
  })),
  ...(['sha256', 'sha512'] as const).map((alg): Case => ({
    name: `hmac-${alg}`,
    fastPath: 'wasm',
    prepare(size, count) {
      const inputs = items(size, count);
      const noble = alg === 'sha256' ? sha256 : sha512;
      return {
        ours: (path) => wasm.hmacBatch(alg, key, inputs, path === undefined ? {} : { path }),
        node: () => inputs.forEach((m) => nodeHmac(alg, key, m)),
        noble: () => inputs.forEach((m) => hmac(noble, key, m)),
      };
    },
  })),
  {
    // Transit's derived keys: one IKM per item, the item's context as info; size = info bytes.
    name: 'hkdf',
    fastPath: 'wasm',
    prepare(size, count) {
      const ikms = items(32, count);
      const infos = items(size, count);
      const salt = new Uint8Array(0);
      return {
        ours: (path) => wasm.hkdfSha256Batch(ikms, infos, 32, salt, path === undefined ? {} : { path }),
        node: () => infos.forEach((info, i) => nodeHkdfSha256(ikms[i]!, info, 32, salt)),
        noble: () => infos.forEach((info, i) => hkdf(sha256, ikms[i]!, salt, info, 32)),
      };
    },
  },
];

/** Items per second of `run` over batches of `count`, timed for about budgetMs after one warm run. */
function rate(run: () => void, count: number): number {
  run();
  let reps = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    run();
    reps++;
    elapsed = performance.now() - start;
  } while (elapsed < budgetMs);
  return (reps * count * 1000) / elapsed;
}

function fmtRate(r: number | undefined): string {
  if (r === undefined) return 'n/a';
  if (r >= 1e6) return `${(r / 1e6).toFixed(2)} M`;
  return `${(r / 1e3).toFixed(0)} k`;
}

function fmtRatio(r: number): string {
  return `${r.toFixed(2)}×`;
}

const selected = cases.filter((c) => filters.length === 0 || filters.some((f) => c.name.includes(f)));
console.log(`WASM crypto core, batches of ${BATCH} items, items/s (node ${process.version}, ${budgetMs} ms per cell)\n`);
console.log('| primitive | item B | ours | kernel | node | node createHash | noble | ours/node | kernel/node |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const c of selected) {
  for (const size of SIZES) {
    const r = c.prepare(size, BATCH);
    const node = rate(r.node, BATCH);
    const ours = rate(() => r.ours(), BATCH);
    const kernel = rate(() => r.ours(c.fastPath), BATCH);
    const alt = r.nodeAlt === undefined ? undefined : rate(r.nodeAlt, BATCH);
    const noble = r.noble === undefined ? undefined : rate(r.noble, BATCH);
    console.log(
      `| ${c.name} | ${size} | ${fmtRate(ours)} | ${fmtRate(kernel)} | ${fmtRate(node)} | ${alt === undefined ? '' : fmtRate(alt)} | ${fmtRate(noble)} | ${fmtRatio(ours / node)} | ${fmtRatio(kernel / node)} |`,
    );
  }
}

console.log('\nSmall batches at 64 B (kernel path forced vs node per item):\n');
console.log('| primitive | items | kernel | node | kernel/node |');
console.log('|---|---:|---:|---:|---:|');
for (const c of selected) {
  for (const count of [1, 4, 16]) {
    const r = c.prepare(64, count);
    const node = rate(r.node, count);
    const kernel = rate(() => r.ours(c.fastPath), count);
    console.log(`| ${c.name} | ${count} | ${fmtRate(kernel)} | ${fmtRate(node)} | ${fmtRatio(kernel / node)} |`);
  }
}
