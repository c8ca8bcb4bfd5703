/**
 * What isolating an external plugin in a process of its own costs per request: the same tiny plugin
 * (bench/plugins/ping.ts) served in-process (loaded by dev mode's -dev-plugin-dir) and isolated
 * (registered in the catalog, run in its process), by the real server in its own process, over
 * HTTP. `ping` is a read answered from memory (prepare and execute: two crossings); `write` adds
 * one storage call that crosses back to the host. Reported: the time per request at one connection
 * (1/throughput; the per-request overhead is the difference) and requests/s at four connections, with ratios from
 * this one run. Cells are interleaved (BENCH_ROUNDS) and each keeps its best figure.
 */
import { createHash } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { interleaved, rangeText } from './lib/load.js';
import { report, type Row } from './lib/report.js';
import { startBenchServer } from './lib/server.js';
import { PING_MODULE_SOURCE } from './plugins/ping.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 3);
const PLUGIN_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'plugins');
// Not `.js`: dev mode loads every `.js` of the folder in-process, and this one must run isolated.
const MODULE = 'ping-isolated.mjs';

await writeFile(path.join(PLUGIN_DIR, MODULE), PING_MODULE_SOURCE);
const server = await startBenchServer();
try {
  const sha256 = createHash('sha256').update(PING_MODULE_SOURCE).digest('hex');
  await server.request('POST', 'sys/plugins/catalog/secret/bench-ping-isolated', { sha256, command: MODULE });
  await server.request('POST', 'sys/mounts/inproc', { type: 'bench-ping' });
  await server.request('POST', 'sys/mounts/isolated', { type: 'bench-ping-isolated' });
  const headers = { 'X-Vault-Token': server.token };
  const body = JSON.stringify({ value: 'x'.repeat(64) });
  const cell = (mount: string, op: 'ping' | 'write', connections: number, seconds: number) => async () => {
    const url = op === 'ping' ? `${server.address}/v1/${mount}/ping` : `${server.address}/v1/${mount}/value/k`;
    const result = await autocannon({
      url,
      method: op === 'ping' ? 'GET' : 'POST',
      connections,
      duration: seconds,
      headers: { ...headers, 'Content-Type': 'application/json' },
      ...(op === 'write' ? { body } : {}),
    });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
    return result.requests.total / (result.duration || seconds);
  };
  const rows: Row[] = [];
  for (const op of ['ping', 'write'] as const) {
    const m = await interleaved(
      (seconds) => ({
        inprocRps: cell('inproc', op, 4, seconds),
        isolatedRps: cell('isolated', op, 4, seconds),
        inprocSerial: cell('inproc', op, 1, seconds),
        isolatedSerial: cell('isolated', op, 1, seconds),
      }),
      DURATION_S,
    );
    rows.push({
      request: op === 'ping' ? 'GET ping (no storage)' : 'POST value (one storage write)',
      'in-process req/s': m.inprocRps.best,
      'isolated req/s': m.isolatedRps.best,
      'isolated / in-process': m.isolatedRps.best / m.inprocRps.best,
      // One connection: each request waits for the previous, so 1/throughput is its whole time.
      'in-process µs/request (1 conn)': 1e6 / m.inprocSerial.best,
      'isolated µs/request (1 conn)': 1e6 / m.isolatedSerial.best,
      'isolation overhead µs/request': 1e6 / m.isolatedSerial.best - 1e6 / m.inprocSerial.best,
      'ranges req/s (in-process, isolated)': `${rangeText(m.inprocRps)}, ${rangeText(m.isolatedRps)}`,
    });
  }
  report('plugin-isolation', rows, [
    `Each cell: ${DURATION_S} s, best of the interleaved rounds; 4 connections for req/s, 1 connection for the time per request.`,
    'The overhead is the isolated time per request minus the in-process one, at one connection: two message round trips to the plugin\'s process (prepare, execute), plus one per storage call.',
  ]);
} finally {
  await server.stop();
  await rm(path.join(PLUGIN_DIR, MODULE), { force: true });
}
