/**
 * `keywarden server` with several workers, as a user runs it (a child process on LevelDB), and
 * clients pinned to one worker each: every client keeps one keep-alive connection, and the
 * cluster hands a connection to one worker for its whole life. Which worker a connection reached
 * is read from `sys/leader` (`is_self`: the active worker says so, a standby does not).
 */
import http from 'node:http';
import { expect } from 'chai';
import { spawnServer, writeConfig, type ChildServer, type ChildConfig } from '../reliability/support/child.js';
import { request, type RequestOptions, type TestResponse } from './http.js';

export interface WorkersServer extends ChildServer {
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL to the primary and every worker it started (a test that failed half way). */
  kill(): void;
}

/** Starts a server of `workers` workers; resolves once the primary reports that every one serves. */
export async function startWorkers(dir: string, config: Omit<ChildConfig, 'dataDir'> & { readonly dataDir?: string }, workers = 2): Promise<WorkersServer> {
  const file = await writeConfig(dir, { dataDir: `${dir}/data`, ...config });
  const server = await spawnServer(file, dir, 60_000, workers);
  await until(() => server.output().includes('"msg":"every worker serves"') || server.child.exitCode !== null);
  if (server.child.exitCode !== null) throw new Error(`the server exited:\n${server.output()}`);
  return {
    ...server,
    stop: async () => {
      if (server.child.exitCode === null) server.child.kill('SIGTERM');
      return (await server.exited).code;
    },
    kill: () => {
      for (const [, pid] of server.output().matchAll(/"pid":(\d+)[^\n]*"msg":"worker started"/g)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Exited already.
        }
      }
      server.child.kill('SIGKILL');
    },
  };
}

/** Waits, turn by turn of the event loop's I/O, for `done`; the mocha timeout bounds it. */
export async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** A client on one connection, so on one worker. */
export class PinnedClient {
  readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  constructor(
    readonly address: string,
    public token?: string,
  ) {}

  send(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
    return request(this.address, method, path, { agent: this.agent, ...(this.token ? { token: this.token } : {}), ...options });
  }

  get(path: string, options?: RequestOptions) {
    return this.send('GET', path, options);
  }

  post(path: string, body?: unknown, options?: RequestOptions) {
    return this.send('POST', path, { ...options, ...(body === undefined ? {} : { body }) });
  }

  put(path: string, body?: unknown, options?: RequestOptions) {
    return this.send('PUT', path, { ...options, ...(body === undefined ? {} : { body }) });
  }

  /** Whether this connection's worker is the active one. */
  async isActive(): Promise<boolean> {
    const res = await this.get('sys/leader');
    expect(res.status, res.text).to.equal(200);
    return res.body.is_self === true;
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * Two clients, one on the active worker and one on a standby, once the workers have elected one
 * (the server unsealed). Connections that reached a worker already taken are closed.
 */
export async function activeAndStandby(address: string, token?: string): Promise<{ active: PinnedClient; standby: PinnedClient }> {
  // Elected, and the winner done taking the role: one worker says it is the active one.
  while ((await request(address, 'GET', 'sys/leader')).body?.is_self !== true);
  let active: PinnedClient | undefined;
  let standby: PinnedClient | undefined;
  for (let tries = 0; tries < 50 && !(active && standby); tries++) {
    const client = new PinnedClient(address, token);
    const isActive = await client.isActive();
    if (isActive && !active) active = client;
    else if (!isActive && !standby) standby = client;
    else client.close();
  }
  if (!active || !standby) throw new Error('no connection reached both an active and a standby worker');
  // Still on their workers: the connection is the same one.
  expect(await active.isActive()).to.equal(true);
  expect(await standby.isActive()).to.equal(false);
  return { active, standby };
}
