/**
 * One frozen-leader trial on a running cluster, shared by test/ha/frozen-leader.test.ts and the
 * fail-over bench: writes run through the other nodes, the active node is stopped with SIGSTOP,
 * writes are sent to it while it is frozen, and it is woken with SIGCONT once another node has
 * taken over. What it measures is what a client sees.
 */
import type { Cluster, ClusterNode } from './cluster.js';
import { sleep } from './cluster.js';
import type { TestResponse } from '../helpers/http.js';

export interface FrozenLeaderTrial {
  readonly frozen: ClusterNode;
  readonly successor: ClusterNode;
  /** From SIGSTOP to the first write acknowledged by another node. */
  readonly failoverMs: number;
  /** Writes sent to the frozen node after SIGSTOP (it answers them once woken). */
  readonly sentToFrozen: readonly string[];
  /** Of those, how many it answered with a 2xx: fencing makes this 0. */
  readonly acknowledgedByFrozen: number;
  /** Its answers to them (0: no answer). */
  readonly frozenStatuses: readonly number[];
  /** Every write acknowledged during the trial, by any node. */
  readonly acknowledged: readonly string[];
  /** From SIGCONT until the woken node names the successor in sys/leader. */
  readonly stepDownMs: number;
}

/** The node answers itself: a standby refuses a write instead of forwarding it. */
const NO_FORWARDING = { headers: { 'X-Vault-No-Request-Forwarding': 'true' } };
const policy = (id: string) => ({ policy: `path "frozen/${id}" { capabilities = ["read"] }` });

/** The answer, or undefined if none came within `ms` (the request may still complete later). */
function within(ms: number, request: Promise<TestResponse>): Promise<TestResponse | undefined> {
  const settled = request.catch(() => undefined);
  return Promise.race([settled, sleep(ms).then(() => undefined)]);
}

/**
 * Runs one trial; `giveUpMs` bounds the wait for a successor. The frozen node is always woken
 * again, and its answers to the writes sent while it was frozen are all collected before this
 * returns.
 */
export async function frozenLeaderTrial(cluster: Cluster, tag: string, giveUpMs: number): Promise<FrozenLeaderTrial> {
  const frozen = await cluster.active();
  const others = cluster.standbys(frozen);
  const acknowledged: string[] = [];
  let stop = false;
  // Load through the other nodes, as clients behind a load balancer; a write counts only on a 2xx.
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const id = `${tag}-w${w}-${i}`;
      const res = await within(1000, others[i % others.length]!.client.put(`sys/policies/acl/${id}`, policy(id)));
      if (res?.status === 204) acknowledged.push(id);
      else await sleep(25);
    }
  };
  const writers = [0, 1].map(writer);
  await sleep(500);

  const frozenAt = Date.now();
  frozen.process!.child.kill('SIGSTOP');
  const sentToFrozen: string[] = [];
  const frozenAnswers: Array<Promise<TestResponse | undefined>> = [];
  let failoverMs = -1;
  let successor: ClusterNode | undefined;
  try {
    for (let probe = 0; failoverMs < 0; probe++) {
      if (probe % 5 === 0) {
        // Queued in the frozen node's socket; it reads them when it wakes.
        const id = `${tag}-to-frozen-${probe}`;
        sentToFrozen.push(id);
        frozenAnswers.push(frozen.client.put(`sys/policies/acl/${id}`, policy(id), NO_FORWARDING).catch(() => undefined));
      }
      const node = others[probe % others.length]!;
      const id = `${tag}-probe-${probe}`;
      const res = await within(500, node.client.put(`sys/policies/acl/${id}`, policy(id)));
      if (res?.status === 204) {
        failoverMs = Date.now() - frozenAt;
        acknowledged.push(id);
      } else {
        await sleep(50);
      }
      if (Date.now() - frozenAt > giveUpMs) throw new Error(`no node took over from the frozen leader within ${giveUpMs} ms`);
    }
    successor = await cluster.active(giveUpMs, others);
    await sleep(500);
  } finally {
    frozen.process!.child.kill('SIGCONT');
  }
  const wokenAt = Date.now();
  // Sent after it woke: it is a standby now, or at least no longer the leader its store fences for.
  for (let i = 0; i < 3; i++) {
    const id = `${tag}-to-woken-${i}`;
    sentToFrozen.push(id);
    frozenAnswers.push(frozen.client.put(`sys/policies/acl/${id}`, policy(id), NO_FORWARDING).catch(() => undefined));
  }
  const answers = await Promise.all(frozenAnswers);
  let stepDownMs = -1;
  while (stepDownMs < 0) {
    const leader = await frozen.client.get('sys/leader');
    if (leader.body?.is_self === false && leader.body.leader_address === successor.address) stepDownMs = Date.now() - wokenAt;
    else if (Date.now() - wokenAt > giveUpMs) throw new Error('the woken node did not step down');
    else await sleep(50);
  }
  stop = true;
  await Promise.all(writers);
  return {
    frozen,
    successor,
    failoverMs,
    sentToFrozen,
    acknowledgedByFrozen: answers.filter((a) => a !== undefined && a.status >= 200 && a.status < 300).length,
    frozenStatuses: answers.map((a) => a?.status ?? 0),
    acknowledged,
    stepDownMs,
  };
}
