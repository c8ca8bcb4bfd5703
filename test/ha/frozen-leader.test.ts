/**
 * A frozen leader (SIGSTOP, its connections left open) on 2- and 3-node clusters with writes
 * running: another node takes over once the leader's lease has run out, and the frozen node, when
 * woken, acknowledges none of the writes sent to it and steps down (storage/postgresql-ha.ts).
 */
import { expect } from 'chai';
import { createTestDatabase } from '../helpers/postgres.js';
import { Cluster } from './cluster.js';
import { frozenLeaderTrial } from './frozen-leader.js';
import { DEFAULT_LEASE } from '../../storage/postgresql-ha.js';

/**
 * The documented bound (docs/deployment.md): the lease, one election round, and the successor's
 * promotion. The lease counts from the leader's last renewal, which was up to one renewal before
 * the freeze, so a take-over comes no sooner than this.
 */
const FAILOVER_BOUND_MS = DEFAULT_LEASE.leaseMs + 2_000;
const EARLIEST_MS = DEFAULT_LEASE.leaseMs - DEFAULT_LEASE.renewMs;

for (const size of [2, 3]) {
  describe(`HA cluster on PostgreSQL: a frozen leader (${size} nodes)`, function () {
    this.timeout(120_000);

    it('is replaced within the lease bound, acknowledges none of the writes sent to it once woken, and steps down', async () => {
      const cluster = await Cluster.start(size, await createTestDatabase());
      try {
        await cluster.initialize();
        const trial = await frozenLeaderTrial(cluster, 'trial', 30_000);
        expect(trial.failoverMs, 'fail-over time').to.be.within(EARLIEST_MS, FAILOVER_BOUND_MS);
        expect(trial.sentToFrozen.length).to.be.greaterThan(3);
        expect(trial.acknowledgedByFrozen, 'writes acknowledged by the woken leader').to.equal(0);
        for (const status of trial.frozenStatuses) expect(status, 'the woken leader refuses with a 503').to.equal(503);
        expect((await trial.frozen.client.get('sys/leader')).body).to.include({ is_self: false, leader_address: trial.successor.address });
        // None of the refused writes happened; every acknowledged one is there, on every node.
        for (const node of cluster.nodes) {
          for (const id of trial.sentToFrozen) expect((await node.client.get(`sys/policies/acl/${id}`)).status, `${id} on ${node.name}`).to.equal(404);
          for (const id of trial.acknowledged) expect((await node.client.get(`sys/policies/acl/${id}`)).status, `${id} on ${node.name}`).to.equal(200);
        }
        expect(trial.acknowledged.length).to.be.greaterThan(5);
        console.log(
          `      ${size} nodes: fail-over ${trial.failoverMs} ms after SIGSTOP; woken leader stepped down in ${trial.stepDownMs} ms, ` +
            `acknowledged ${trial.acknowledgedByFrozen} of the ${trial.sentToFrozen.length} writes sent to it; ${trial.acknowledged.length} writes acknowledged by the others`,
        );
      } finally {
        await cluster.stop();
      }
    });
  });
}
