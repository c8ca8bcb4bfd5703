/**
 * The HA manager: what it counts for sys/metrics (changes of the active node as each node sees
 * them, forwarded requests by result), the nodes it lists, and how step-downs hand the role over.
 * The election runs over an in-memory lock with the contract of the PostgreSQL one
 * (test/ha/cluster.test.ts and test/ha/workers.test.ts run the real one).
 */
import { expect } from 'chai';
import { pino } from 'pino';
import { HaManager, STEP_DOWN_PAUSE_MS } from '../../../core/ha/ha-manager.js';
import { UnavailableError } from '../../../core/errors.js';
import type { HaLock, LeaderInfo, Leadership, SharedStorage } from '../../../storage/storage.js';

/** One lock shared by the nodes of a test: held by at most one of them. */
class MemoryLock {
  holder: LeaderInfo | undefined;
  epoch = 0;
  private readonly listeners: (() => void)[] = [];

  forNode(): HaLock {
    return {
      tryAcquire: async (self) => {
        if (this.holder) return undefined;
        this.holder = { ...self, since: new Date() };
        this.epoch++;
        for (const listener of this.listeners) listener();
        const leadership: Leadership = {
          epoch: this.epoch,
          lost: new Promise<string>(() => {}),
          release: async () => {
            if (this.holder?.nodeId === self.nodeId) this.holder = undefined;
          },
        };
        return leadership;
      },
      leader: async () => this.holder,
      onLeaderChange: (listener) => void this.listeners.push(listener),
      close: async () => {},
    };
  }
}

/** A node on `lock`, reached at `apiAddr` (by default an address that answers nothing). */
function haNode(lock: MemoryLock, nodeId: string, apiAddr = 'http://127.0.0.1:1'): HaManager {
  // The manager never touches the store itself; the lock is its only tie to it.
  const ha = new HaManager({ storage: {} as SharedStorage, lock: lock.forNode(), apiAddr, logger: pino({ level: 'silent' }), nodeId });
  ha.attach({ promote: async () => {}, demote: () => {} }, { key: () => Buffer.alloc(32, 1) });
  return ha;
}

const until = async (condition: () => boolean, what: string) => {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('HA manager: counts, nodes and step-down', function () {
  it('counts each change of active node once per node, and forwards that fail', async function () {
    const lock = new MemoryLock();
    const a = haNode(lock, 'a');
    const b = haNode(lock, 'b');
    try {
      a.join();
      await until(() => a.state === 'active', 'a to become active');
      b.join();
      await until(() => b.state === 'standby', 'b to stand by');
      await new Promise((r) => setTimeout(r, 600));
      // The first active node either sees is not a change.
      expect(a.counts.leaderChanges).to.equal(0);
      expect(b.counts.leaderChanges).to.equal(0);

      await a.stepDown();
      await until(() => b.state === 'active', 'b to take over');
      await until(() => a.counts.leaderChanges === 1, 'a to see b');
      expect(b.counts.leaderChanges).to.equal(1);

      // b's address (http://127.0.0.1:1) answers nothing: a failed forward.
      const forwarded = a.forward({ method: 'POST', path: 'transit/keys/k', query: {}, body: {}, headers: {}, remoteAddress: '127.0.0.1' });
      await forwarded.then(
        () => expect.fail('forwarded to nowhere'),
        (err: unknown) => expect(err).to.be.instanceOf(UnavailableError),
      );
      expect(a.counts).to.deep.include({ forwarded: 0, forwardFailures: 1 });
    } finally {
      await a.leave();
      await b.leave();
    }
  });

  it('lists for sys/ha-status the node itself and, on a standby, the active node', async function () {
    const lock = new MemoryLock();
    const a = haNode(lock, 'a', 'http://10.0.0.1:8200');
    const b = haNode(lock, 'b', 'http://10.0.0.2:8200');
    try {
      a.join();
      await until(() => a.state === 'active', 'a to become active');
      b.join();
      await until(() => b.state === 'standby', 'b to stand by');
      expect(await a.knownNodes()).to.deep.equal([{ apiAddr: 'http://10.0.0.1:8200', active: true, self: true }]);
      expect(await b.knownNodes()).to.deep.equal([
        { apiAddr: 'http://10.0.0.2:8200', active: false, self: true },
        { apiAddr: 'http://10.0.0.1:8200', active: true, self: false },
      ]);
    } finally {
      await a.leave();
      await b.leave();
    }
  });

  it('hands the role back to a node that stepped down once another node took it, without waiting out its pause', async function () {
    const lock = new MemoryLock();
    const a = haNode(lock, 'a');
    const b = haNode(lock, 'b');
    try {
      a.join();
      await until(() => a.state === 'active', 'a to become active');
      b.join();
      await a.stepDown();
      await until(() => b.state === 'active', 'b to take over');
      // a is within its pause (STEP_DOWN_PAUSE_MS) still; b hands the role over at once anyway,
      // and a takes it rather than both sitting out and b taking it back.
      const steppedDown = Date.now();
      await b.stepDown();
      await until(() => a.state === 'active', 'a to take the role back');
      expect(Date.now() - steppedDown).to.be.below(STEP_DOWN_PAUSE_MS / 2);
      expect(b.state).to.equal('standby');
    } finally {
      await a.leave();
      await b.leave();
    }
  });
});
