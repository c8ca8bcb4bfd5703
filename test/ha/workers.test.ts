/**
 * PostgreSQL HA with workers: two nodes of two workers each on one database. The node's primary
 * process is the node as the database sees it, its workers a local cluster under it
 * (docs/architecture.md, "Workers"); every worker of every node serves, and one worker of the
 * whole cluster is active. Each check goes through clients pinned to one worker each.
 */
import { expect } from 'chai';
import { Cluster, type ClusterNode } from './cluster.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { PinnedClient } from '../helpers/workers.js';
import { STEP_DOWN_PAUSE_MS } from '../../core/ha/ha-manager.js';

interface Worker {
  readonly node: ClusterNode;
  /** The worker's number within its node. */
  readonly number: number;
  readonly client: PinnedClient;
}

/** Which worker of its node a pinned connection reached: its own forwarding socket names it. */
async function workerOf(client: PinnedClient): Promise<number> {
  const res = await client.get('sys/ha-status');
  expect(res.status, res.text).to.equal(200);
  const self = (res.body.data.nodes as { api_address: string; hostname: string }[]).find((n) => n.hostname !== '')!;
  return Number(/worker-(\d+)\.sock$/.exec(self.api_address)![1]);
}

/** A client pinned to each worker of `node`: new connections until every worker has one. */
async function pinEach(node: ClusterNode, token: string, workers: number): Promise<Worker[]> {
  const found = new Map<number, PinnedClient>();
  for (let tries = 0; tries < 60 && found.size < workers; tries++) {
    const client = new PinnedClient(node.address, token);
    const number = await workerOf(client);
    if (found.has(number)) client.close();
    else found.set(number, client);
  }
  expect(found.size, `${node.name}: connections reached ${found.size} of its ${workers} workers`).to.equal(workers);
  return [...found].map(([number, client]) => ({ node, number, client }));
}

describe('PostgreSQL HA with workers: two nodes of two workers each', function () {
  this.timeout(240_000);
  let cluster: Cluster;
  let workers: Worker[];
  const name = (w: Worker) => `${w.node.name} worker ${w.number}`;

  /** The workers that say they are active. */
  const actives = async () => {
    const answers = await Promise.all(workers.map(async (w) => ((await w.client.get('sys/leader')).body.is_self === true ? [w] : [])));
    return answers.flat();
  };
  /** The active workers once `done` holds of them, within `ms` (a step-down's pause is 10 s). */
  const activesWhen = async (done: (found: Worker[]) => boolean, ms = 45_000): Promise<Worker[]> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = await actives();
      if (done(found)) return found;
      if (Date.now() > deadline) expect.fail(`after ${ms} ms the active workers are still: ${found.map(name).join(', ') || 'none'}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  before(async () => {
    cluster = await Cluster.start(2, await createTestDatabase(), undefined, undefined, {}, 2);
    const init = await cluster.nodes[0]!.client.put('sys/init', { secret_shares: 3, secret_threshold: 2 });
    expect(init.status, init.text).to.equal(200);
    cluster.rootToken = init.body.root_token as string;
    // Both shares to one worker of each node (one connection); its sibling follows before the answer.
    for (const node of cluster.nodes) {
      const one = new PinnedClient(node.address);
      for (const key of (init.body.keys as string[]).slice(0, 2)) expect((await one.put('sys/unseal', { key })).status).to.equal(200);
      expect((await one.get('sys/seal-status')).body.sealed).to.equal(false);
      one.close();
    }
    workers = [...(await pinEach(cluster.nodes[0]!, cluster.rootToken, 2)), ...(await pinEach(cluster.nodes[1]!, cluster.rootToken, 2))];
    const active = await activesWhen((found) => found.length === 1);
    expect((await active[0]!.client.post('sys/mounts/kv', { type: 'kv', options: { version: '2' } })).status).to.equal(204);
    expect((await active[0]!.client.post('sys/mounts/transit', { type: 'transit' })).status).to.equal(204);
    expect((await active[0]!.client.post('transit/keys/k')).status).to.be.oneOf([200, 204]);
  });

  after(async () => {
    for (const w of workers ?? []) w.client.close();
    await cluster?.stop();
  });

  it('has one active worker in the whole cluster; every other worker of either node is a standby', async () => {
    expect(await actives()).to.have.length(1);
    for (const w of workers) {
      const health = await w.client.get('sys/health');
      expect([200, 429], name(w)).to.include(health.status);
      expect(health.body.sealed, name(w)).to.equal(false);
    }
  });

  it('takes writes through every worker of every node and reads each of them through every other at once', async () => {
    for (const writer of workers) {
      const written = await writer.client.post(`kv/data/from-${writer.node.name}-${writer.number}`, { data: { by: name(writer) } });
      expect(written.status, `${name(writer)}: ${written.text}`).to.equal(200);
      for (const reader of workers) {
        const read = await reader.client.get(`kv/data/from-${writer.node.name}-${writer.number}`);
        expect(read.status, `${name(writer)} → ${name(reader)}: ${read.text}`).to.equal(200);
        expect(read.body.data.data).to.deep.equal({ by: name(writer) });
      }
    }
  });

  it('encrypts on every worker of every node and decrypts on every other', async () => {
    for (const encrypter of workers) {
      const plaintext = Buffer.from(`from ${name(encrypter)}`).toString('base64');
      const sealed = await encrypter.client.post('transit/encrypt/k', { plaintext });
      expect(sealed.status, sealed.text).to.equal(200);
      for (const decrypter of workers) {
        const opened = await decrypter.client.post('transit/decrypt/k', { ciphertext: sealed.body.data.ciphertext });
        expect(opened.body.data?.plaintext, `${name(encrypter)} → ${name(decrypter)}: ${opened.text}`).to.equal(plaintext);
      }
    }
  });

  it('moves the active role to the other node on sys/step-down sent to any worker', async () => {
    for (let round = 0; round < 2; round++) {
      const [before] = await actives();
      // A worker of the other node sends it: the request reaches the active node through forwarding.
      const sender = workers.find((w) => w.node !== before!.node)!;
      const stepped = await sender.client.put('sys/step-down');
      expect(stepped.status, stepped.text).to.equal(204);
      // In the second round the other node is still within the pause of its own step-down; it
      // takes the role anyway, well before that pause ends (a race with this node's own pause before).
      const after = await activesWhen((found) => found.length === 1 && found[0]!.node !== before!.node, round === 0 ? 45_000 : STEP_DOWN_PAUSE_MS - 2_000);
      expect(after[0]!.node.name).to.not.equal(before!.node.name);
      // Writes go on through every worker.
      for (const w of workers) expect((await w.client.post('kv/data/after-step-down', { data: { round, by: name(w) } })).status, name(w)).to.equal(200);
    }
  });
});
