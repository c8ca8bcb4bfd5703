/**
 * Several production servers (`keywarden server -config FILE`, child processes) on one PostgreSQL
 * database with HA enabled, for the scale-out tests. Ports are chosen up front because each node
 * must advertise its own `api_addr`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawnServer, type ChildServer } from '../reliability/support/child.js';
import { TestClient } from '../helpers/http.js';
import { freePort } from '../helpers/net.js';
import { until } from '../helpers/workers.js';

export interface ClusterNode {
  readonly name: string;
  readonly address: string;
  readonly client: TestClient;
  process: ChildServer | undefined;
}

export class Cluster {
  rootToken = '';
  unsealKeys: string[] = [];

  private constructor(
    readonly nodes: ClusterNode[],
    private readonly dir: string,
    private readonly configs: string[],
    private readonly bases: Record<string, unknown>[],
    /** Serving processes per node (`-workers`). */
    private readonly workers: number,
  ) {}

  /**
   * Starts `count` nodes on `connectionUrl`; `urlFor(i)` may give a node another URL (through a
   * proxy the test can cut), and `apiAddrFor(i, address)` another `api_addr` than its listener's
   * address (through a proxy that sees what the other nodes send it); `settings` are more
   * configuration keys every node's file holds, or each node's own; `workers` the serving
   * processes of each node.
   */
  static async start(
    count: number,
    connectionUrl: string,
    urlFor?: (index: number) => string | undefined,
    apiAddrFor?: (index: number, address: string) => Promise<string>,
    settings: Record<string, unknown> | ((index: number) => Record<string, unknown>) = {},
    workers = 1,
  ): Promise<Cluster> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-ha-'));
    const nodes: ClusterNode[] = [];
    const configs: string[] = [];
    const bases: Record<string, unknown>[] = [];
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const address = `http://127.0.0.1:${port}`;
      const file = path.join(dir, `node${i}.json`);
      const base = {
        listener: { tcp: { address: `127.0.0.1:${port}`, tls_disable: true } },
        storage: { postgresql: { connection_url: urlFor?.(i) ?? connectionUrl, ha_enabled: true, max_parallel: 8 } },
        api_addr: (await apiAddrFor?.(i, address)) ?? address,
        log_level: 'info',
        periodic_interval: '1s',
      };
      await writeFile(file, JSON.stringify({ ...base, ...(typeof settings === 'function' ? settings(i) : settings) }));
      bases.push(base);
      configs.push(file);
      nodes.push({ name: `node${i}`, address, client: new TestClient(address), process: undefined });
    }
    const cluster = new Cluster(nodes, dir, configs, bases, workers);
    await Promise.all(nodes.map((_, i) => cluster.startNode(i)));
    return cluster;
  }

  /** Gives a stopped node `settings` beside its listener, storage and address (a `seal` stanza), for its next start. */
  async reconfigure(node: ClusterNode, settings: Record<string, unknown>): Promise<void> {
    const index = this.nodes.indexOf(node);
    await writeFile(this.configs[index]!, JSON.stringify({ ...this.bases[index], ...settings }));
  }

  async startNode(index: number): Promise<void> {
    const node = await spawnServer(this.configs[index]!, this.dir, 60_000, this.workers);
    this.nodes[index]!.process = node;
    if (this.workers > 1) await until(() => node.output().includes('"msg":"every worker serves"') || node.child.exitCode !== null);
  }

  /** Initializes through node 0 (3 shares, threshold 2) and unseals every node with the same shares. */
  async initialize(): Promise<void> {
    const init = await this.nodes[0]!.client.put('sys/init', { secret_shares: 3, secret_threshold: 2 });
    if (init.status !== 200) throw new Error(`init failed: ${init.text}`);
    this.rootToken = init.body.root_token;
    this.unsealKeys = init.body.keys;
    for (const node of this.nodes) {
      node.client.token = this.rootToken;
      await this.unseal(node);
    }
  }

  async unseal(node: ClusterNode): Promise<void> {
    for (const key of this.unsealKeys.slice(0, 2)) {
      const res = await node.client.put('sys/unseal', { key });
      if (res.status !== 200) throw new Error(`unseal of ${node.name} failed: ${res.text}`);
    }
  }

  /** The node that says it is active, waiting up to `timeoutMs` for the cluster to have one. */
  async active(timeoutMs = 15_000, among: readonly ClusterNode[] = this.nodes): Promise<ClusterNode> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const node of among) {
        if (!node.process) continue;
        const res = await node.client.get('sys/leader').catch(() => undefined);
        if (res?.status === 200 && res.body.is_self === true) return node;
      }
      if (Date.now() > deadline) throw new Error('no active node');
      await sleep(50);
    }
  }

  standbys(active: ClusterNode): ClusterNode[] {
    return this.nodes.filter((n) => n !== active && n.process);
  }

  /** SIGKILLs a node and waits for it to be gone. */
  async kill(node: ClusterNode): Promise<void> {
    const proc = node.process;
    node.process = undefined;
    if (!proc) return;
    proc.child.kill('SIGKILL');
    await proc.exited;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.nodes.map(async (node) => {
        const proc = node.process;
        node.process = undefined;
        if (!proc) return;
        proc.child.kill('SIGTERM');
        const done = await Promise.race([proc.exited.then(() => true), sleep(10_000).then(() => false)]);
        if (!done) {
          proc.child.kill('SIGKILL');
          await proc.exited;
        }
      }),
    );
    await rm(this.dir, { recursive: true, force: true });
  }

  output(): string {
    return this.nodes.map((n) => `--- ${n.name}\n${n.process?.output() ?? '(stopped)'}`).join('\n');
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Sends `request` up to `tries` times, 100 ms apart, until it is answered with `status`; returns the last answer. */
export async function untilStatus<T extends { status: number }>(request: () => Promise<T>, status: number, tries: number): Promise<T> {
  let answer = await request();
  for (let i = 1; i < tries && answer.status !== status; i++) {
    await sleep(100);
    answer = await request();
  }
  return answer;
}
