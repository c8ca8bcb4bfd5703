/**
 * For the auto-seal tests: a production server (`keywarden server -config`, a child process on
 * LevelDB) with `seal` stanzas, started and killed with SIGKILL; its seal-status polled; a marker
 * behind the barrier to find again after restarts.
 */
import { expect } from 'chai';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../core/server.js';
import { TestClient, createToken } from './http.js';
import { testConfig } from './server.js';
import { spawnServer, writeConfig, type ChildServer } from '../reliability/support/child.js';

export type Status = Record<string, unknown>;

/** Polls sys/seal-status until `done` holds for it, for up to `ms`; returns the last answer. */
export async function waitStatus(client: TestClient, done: (status: Status) => boolean, ms = 20_000): Promise<Status> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await client.get('sys/seal-status');
    expect(res.status, res.text).to.equal(200);
    if (done(res.body) || Date.now() > deadline) return res.body as Status;
    await delay(100);
  }
}

export const unsealed = (s: Status): boolean => s.sealed === false;
export const REWRAPPED = "auto-unseal: the root key is wrapped again under the seal's current keys";
export const failing = (s: Status): boolean => typeof s.seal_error === 'string';

/** A child server on `dataDir`, started with the given top-level settings (`seal`, …); killed with SIGKILL. */
export class SealedNode {
  child: ChildServer | undefined;
  client!: TestClient;

  constructor(
    private readonly dir: string,
    private readonly dataDir: string,
  ) {}

  /** `seal` as the configuration file's JSON form has it: `{ transit: {…} }`, or a list of such for several stanzas. */
  async start(seal: unknown, env: NodeJS.ProcessEnv = {}): Promise<TestClient> {
    const file = await writeConfig(this.dir, { dataDir: this.dataDir, settings: { seal } });
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      this.child = await spawnServer(file, this.dir);
    } finally {
      for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key];
      Object.assign(process.env, saved);
    }
    this.client = new TestClient(this.child.address);
    return this.client;
  }

  /** Waits until the server logged `text` (the re-wrap of the root key is logged once it is stored). */
  logged(text: string): Promise<void> {
    return loggedBy(this.child!, text);
  }

  async kill(): Promise<void> {
    if (!this.child) return;
    this.child.child.kill('SIGKILL');
    const exit = await this.child.exited;
    expect(exit.signal).to.equal('SIGKILL');
    this.child = undefined;
  }
}

/**
 * Waits until a child server logged `text`. The node answers unsealed before it has stored the
 * root key wrapped again, so a test that kills it after a rotation waits for REWRAPPED first.
 */
export async function loggedBy(child: ChildServer, text: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!child.output().includes(text)) {
    if (Date.now() > deadline) expect.fail(`the server did not log "${text}":\n${child.output()}`);
    await delay(100);
  }
}

/** Initializes through `client` with an auto seal; returns the root token. */
export async function initAuto(client: TestClient): Promise<string> {
  const init = await client.put('sys/init', {});
  expect(init.status, init.text).to.equal(200);
  expect(init.body.keys).to.deep.equal([]);
  expect(init.body.root_token).to.be.a('string');
  return init.body.root_token as string;
}

/** Stores a policy to find after restarts: the data behind the barrier. */
export async function writeMarker(client: TestClient, token: string): Promise<void> {
  const res = await client.put('sys/policies/acl/marker', { policy: 'path "marker/*" { capabilities = ["read"] }' }, { token });
  expect(res.status, res.text).to.equal(204);
}

export async function expectMarker(client: TestClient, token: string): Promise<void> {
  const res = await client.get('sys/policies/acl/marker', { token });
  expect(res.status, res.text).to.equal(200);
  expect(res.body.data.policy).to.contain('marker/*');
}

/** A loopback port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A second Keywarden serving transit to seal with: on LevelDB at a fixed port, so it can stop and
 * come back with its keys; a transit key and an orphan periodic token allowed only to encrypt and
 * decrypt with it, as Vault's transit seal documentation has it.
 */
export class TransitServer {
  server: RunningServer | undefined;
  client!: TestClient;
  sealToken = '';
  address = '';
  private rootToken = '';
  private unsealKey = '';
  private port = 0;

  constructor(
    private readonly dataDir: string,
    readonly keyName = 'autounseal',
  ) {}

  /** The stanza of a transit seal on this server, with more settings (`name`, `priority`, …). */
  stanza(more: Record<string, unknown> = {}): Record<string, unknown> {
    return { transit: { address: this.address, token: this.sealToken, mount_path: 'transit/', key_name: this.keyName, ...more } };
  }

  async create(): Promise<this> {
    this.port = await freePort();
    this.address = `http://127.0.0.1:${this.port}`;
    await this.start();
    const init = await this.client.put('sys/init', { secret_shares: 1, secret_threshold: 1 });
    this.unsealKey = init.body.keys[0] as string;
    this.rootToken = init.body.root_token as string;
    await this.unseal();
    expect((await this.client.post('sys/mounts/transit', { type: 'transit' })).status).to.equal(204);
    expect((await this.client.post(`transit/keys/${this.keyName}`, {})).status).to.be.oneOf([200, 204]);
    const policy = `path "transit/encrypt/${this.keyName}" { capabilities = ["update"] }\npath "transit/decrypt/${this.keyName}" { capabilities = ["update"] }`;
    expect((await this.client.put('sys/policies/acl/autounseal', { policy })).status).to.equal(204);
    this.sealToken = await createToken(this.client, { policies: ['autounseal'], no_parent: true, period: '24h' });
    return this;
  }

  /** Starts it again after `stop`, unsealed, with the keys it had. */
  async restart(): Promise<void> {
    await this.start();
    await this.unseal();
  }

  async stop(): Promise<void> {
    await this.server?.close(0);
    this.server = undefined;
  }

  private async start(): Promise<void> {
    const config = testConfig({ leveldbPath: this.dataDir });
    this.server = await startServer({ config: { ...config, listeners: [{ ...config.listeners[0]!, address: `127.0.0.1:${this.port}` }] }, logger: pino({ level: 'silent' }) });
    this.client = new TestClient(this.server.address);
  }

  private async unseal(): Promise<void> {
    const unseal = await this.client.put('sys/unseal', { key: this.unsealKey });
    expect(unseal.body.sealed, unseal.text).to.equal(false);
    this.client.token = this.rootToken;
  }
}
