/**
 * The database goes away under load, on a 2-node cluster whose nodes reach PostgreSQL through
 * proxies the test controls: every connection dropped and new ones refused for a while (what the
 * nodes see of a restart), and every connection held open with nothing answered (a paused
 * server). Requests fail cleanly and promptly, the nodes reconnect on their own, and nothing
 * acknowledged is lost.
 */
import { expect } from 'chai';
import { createTestDatabase } from '../helpers/postgres.js';
import type { TestResponse } from '../helpers/http.js';
import { Cluster, sleep, type ClusterNode } from './cluster.js';
import { TcpProxy } from './tcp-proxy.js';

/**
 * The longest a request may wait on a database that does not answer: a free connection within 5 s,
 * then the query within 10 s (storage/postgresql.ts), plus 2 s of slack for a loaded machine.
 */
const ANSWER_BOUND_MS = 17_000;

describe('HA cluster on PostgreSQL: the database restarted or paused under load', function () {
  this.timeout(180_000);
  let cluster: Cluster;
  let proxies: TcpProxy[];

  before(async () => {
    const url = new URL(await createTestDatabase());
    proxies = [];
    for (let i = 0; i < 2; i++) proxies.push(await TcpProxy.start({ host: url.hostname, port: Number(url.port) }));
    cluster = await Cluster.start(2, url.toString(), (i) => {
      const viaProxy = new URL(url.toString());
      viaProxy.port = String(proxies[i]!.port);
      return viaProxy.toString();
    });
    await cluster.initialize();
    await cluster.active();
  });

  after(async () => {
    if (cluster) await cluster.stop();
    for (const proxy of proxies ?? []) await proxy.close();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.output());
  });

  /**
   * Writes through both nodes until `stop`; each answer is timed. Returns what was acknowledged
   * and every answer that was neither a 2xx nor a 503, or came later than the bound.
   */
  function load(tag: string) {
    const acknowledged: string[] = [];
    const bad: string[] = [];
    let refused = 0;
    let stop = false;
    const writer = async (node: ClusterNode, w: number) => {
      for (let i = 0; !stop; i++) {
        const id = `${tag}-${w}-${i}`;
        const started = Date.now();
        const res: TestResponse | undefined = await node.client
          .put(`sys/policies/acl/${id}`, { policy: `path "db/${id}" { capabilities = ["read"] }` })
          .catch(() => undefined);
        const took = Date.now() - started;
        if (took > ANSWER_BOUND_MS) bad.push(`${id}: answered after ${took} ms`);
        if (res?.status === 204) {
          acknowledged.push(id);
        } else {
          if (res?.status === 503) refused++;
          else bad.push(`${id}: ${res ? `${res.status} ${res.text}` : 'no answer'}`);
          await sleep(100);
        }
      }
    };
    const writers = cluster.nodes.flatMap((node, i) => [writer(node, 2 * i), writer(node, 2 * i + 1)]);
    return {
      acknowledged,
      bad,
      refused: () => refused,
      finish: async () => {
        stop = true;
        await Promise.all(writers);
      },
    };
  }

  /** Waits until a write through every node is acknowledged again; how long that took. */
  async function recovered(tag: string): Promise<number> {
    const started = Date.now();
    for (const node of cluster.nodes) {
      for (let i = 0; ; i++) {
        const res = await node.client.put(`sys/policies/acl/${tag}-${node.name}-${i}`, { policy: 'path "r" { capabilities = ["read"] }' }).catch(() => undefined);
        if (res?.status === 204) break;
        if (Date.now() - started > 60_000) throw new Error(`${node.name} did not serve writes again within 60 s`);
        await sleep(200);
      }
    }
    return Date.now() - started;
  }

  async function expectAllThere(ids: readonly string[]): Promise<void> {
    for (const node of cluster.nodes) {
      for (const id of ids) expect((await node.client.get(`sys/policies/acl/${id}`)).status, `${id} on ${node.name}`).to.equal(200);
    }
  }

  it('a restart (every connection dropped, new ones refused): requests get 503s, never a 500 or a hang, the nodes reconnect, nothing acknowledged is lost', async () => {
    const writes = load('restart');
    await sleep(1000);
    await Promise.all(proxies.map((p) => p.cut()));
    await sleep(3000);
    await Promise.all(proxies.map((p) => p.restore()));
    const recoveryMs = await recovered('after-restart');
    await sleep(500);
    await writes.finish();
    expect(writes.bad, writes.bad.join('\n')).to.deep.equal([]);
    expect(writes.refused(), 'writes refused while the database was down').to.be.greaterThan(0);
    expect(writes.acknowledged.length).to.be.greaterThan(5);
    await expectAllThere(writes.acknowledged);
    console.log(`      restart: ${writes.acknowledged.length} writes acknowledged, ${writes.refused()} refused with 503; writes served again ${recoveryMs} ms after the database came back`);
  });

  it('a pause (connections open, nothing answered): requests get 503s within the bound, the nodes recover when it resumes, nothing acknowledged is lost', async () => {
    const writes = load('pause');
    await sleep(1000);
    // Longer than the bound: a request waiting for the database to resume would break it.
    for (const proxy of proxies) proxy.pause();
    await sleep(ANSWER_BOUND_MS + 5_000);
    for (const proxy of proxies) proxy.resume();
    const recoveryMs = await recovered('after-pause');
    await sleep(500);
    await writes.finish();
    expect(writes.bad, writes.bad.join('\n')).to.deep.equal([]);
    expect(writes.refused(), 'writes refused while the database was paused').to.be.greaterThan(0);
    await expectAllThere(writes.acknowledged);
    console.log(`      pause: ${writes.acknowledged.length} writes acknowledged, ${writes.refused()} refused with 503; writes served again ${recoveryMs} ms after the database resumed`);
  });
});
