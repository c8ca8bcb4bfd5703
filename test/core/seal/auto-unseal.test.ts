/**
 * Auto-unseal (issue #32): a production server (`keywarden server -config`, a child process on
 * LevelDB) with a `seal` stanza is initialized, killed with SIGKILL, and answers unsealed again
 * without any unseal call; a rotated seal key re-wraps the root key at the next start, after
 * which the old key is needed no more; a wrong key or an unreachable seal leaves the node sealed
 * with the reason in sys/seal-status, and the store untouched.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../../core/server.js';
import { TestClient, createToken } from '../../helpers/http.js';
import { runCli } from '../../helpers/cli.js';
import { tempDir, testConfig } from '../../helpers/server.js';
import { spawnServer, writeConfig, type ChildServer } from '../../reliability/support/child.js';
import { loggedBy, REWRAPPED } from '../../helpers/auto-seal.js';

/** Polls sys/seal-status until `done` holds for it, for up to `ms`; returns the last answer. */
async function waitStatus(client: TestClient, done: (status: Record<string, unknown>) => boolean, ms = 20_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await client.get('sys/seal-status');
    expect(res.status, res.text).to.equal(200);
    if (done(res.body) || Date.now() > deadline) return res.body as Record<string, unknown>;
    await delay(100);
  }
}

const unsealed = (s: Record<string, unknown>) => s.sealed === false;
const failing = (s: Record<string, unknown>) => typeof s.seal_error === 'string';

/** A child server on `dataDir` with `seal`; killed (SIGKILL) by `kill`. */
class Node {
  child: ChildServer | undefined;
  client!: TestClient;

  constructor(
    private readonly dir: string,
    private readonly dataDir: string,
  ) {}

  async start(seal: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<TestClient> {
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

  async kill(): Promise<void> {
    if (!this.child) return;
    this.child.child.kill('SIGKILL');
    const exit = await this.child.exited;
    expect(exit.signal).to.equal('SIGKILL');
    this.child = undefined;
  }
}

/** Initializes through `client` with an auto seal; returns the root token. */
async function initAuto(client: TestClient): Promise<string> {
  const init = await client.put('sys/init', {});
  expect(init.status, init.text).to.equal(200);
  expect(init.body.keys).to.deep.equal([]);
  expect(init.body.root_token).to.be.a('string');
  return init.body.root_token as string;
}

/** Stores a policy to find after restarts: the data behind the barrier. */
async function writeMarker(client: TestClient, token: string): Promise<void> {
  const res = await client.put('sys/policies/acl/marker', { policy: 'path "marker/*" { capabilities = ["read"] }' }, { token });
  expect(res.status, res.text).to.equal(204);
}

async function expectMarker(client: TestClient, token: string): Promise<void> {
  const res = await client.get('sys/policies/acl/marker', { token });
  expect(res.status, res.text).to.equal(200);
  expect(res.body.data.policy).to.contain('marker/*');
}

describe('auto-unseal: a production server with a seal stanza unseals itself', function () {
  this.timeout(120_000);

  describe('seal "static"', () => {
    let dir: { path: string; remove: () => Promise<void> };
    let node: Node;
    const keyFile = (name: string) => path.join(dir.path, `${name}.key`);

    beforeEach(async () => {
      dir = await tempDir('keywarden-static-seal-');
      node = new Node(dir.path, path.join(dir.path, 'data'));
      // As `openssl rand -out FILE 32` writes it: raw bytes.
      await writeFile(keyFile('k1'), randomBytes(32), { mode: 0o600 });
      await writeFile(keyFile('k2'), randomBytes(32), { mode: 0o600 });
    });

    afterEach(async () => {
      await node.kill();
      await dir.remove();
    });

    it('is initialized without shares, restarted with SIGKILL, and answers unsealed without any unseal call', async () => {
      const client = await node.start({ static: { current_key_id: 'k1', current_key: `file://${keyFile('k1')}` } });
      const before = (await client.get('sys/seal-status')).body;
      expect(before).to.include({ type: 'static', initialized: false, sealed: true, recovery_seal: true });
      const token = await initAuto(client);
      expect(await waitStatus(client, unsealed)).to.include({ sealed: false, type: 'static' });
      await writeMarker(client, token);

      await node.kill();
      const again = await node.start({ static: { current_key_id: 'k1', current_key: `file://${keyFile('k1')}` } });
      expect(await waitStatus(again, unsealed)).to.include({ type: 'static', initialized: true, sealed: false, recovery_seal: true, t: 0, n: 0 });
      await expectMarker(again, token);
    });

    it('takes the key from an environment variable or literally, as base64 or hex', async () => {
      const key = randomBytes(32);
      const client = await node.start({ static: { current_key_id: 'env-key', current_key: 'env://KEYWARDEN_TEST_SEAL_KEY' } }, { KEYWARDEN_TEST_SEAL_KEY: key.toString('base64') });
      const token = await initAuto(client);
      await writeMarker(client, token);
      await node.kill();
      const literal = await node.start({ static: { current_key_id: 'env-key', current_key: key.toString('hex') } });
      expect(await waitStatus(literal, unsealed)).to.include({ sealed: false });
      await expectMarker(literal, token);
    });

    it('re-wraps the root key under a new current_key at the next start, after which the previous key is needed no more', async () => {
      const client = await node.start({ static: { current_key_id: 'k1', current_key: `file://${keyFile('k1')}` } });
      const token = await initAuto(client);
      await writeMarker(client, token);
      await node.kill();

      const rotated = await node.start({
        static: { current_key_id: 'k2', current_key: `file://${keyFile('k2')}`, previous_key_id: 'k1', previous_key: `file://${keyFile('k1')}` },
      });
      expect(await waitStatus(rotated, unsealed)).to.include({ sealed: false });
      await loggedBy(node.child!, REWRAPPED);
      await node.kill();

      const withoutOld = await node.start({ static: { current_key_id: 'k2', current_key: `file://${keyFile('k2')}` } });
      expect(await waitStatus(withoutOld, unsealed)).to.include({ sealed: false });
      await expectMarker(withoutOld, token);
    });

    it('stays sealed with a clear error for a key that does not open the root key, or one it does not have, and the store stays whole', async () => {
      const client = await node.start({ static: { current_key_id: 'k1', current_key: `file://${keyFile('k1')}` } });
      const token = await initAuto(client);
      await writeMarker(client, token);
      await node.kill();

      // The right id in front of the wrong key.
      const wrongKey = await node.start({ static: { current_key_id: 'k1', current_key: `file://${keyFile('k2')}` } });
      const wrong = await waitStatus(wrongKey, failing);
      expect(wrong).to.include({ sealed: true, type: 'static', initialized: true });
      expect(wrong.seal_error).to.match(/static key "k1" does not open the stored root key/);
      const unseal = await wrongKey.put('sys/unseal', { key: randomBytes(32).toString('hex') });
      expect(unseal.status).to.equal(400);
      expect(unseal.body.errors[0]).to.match(/static seal unseals this store at start/);
      await node.kill();

      // A key under another id, and no previous_key naming the one that wrapped it.
      const unknown = await node.start({ static: { current_key_id: 'k2', current_key: `file://${keyFile('k2')}` } });
      const missing = await waitStatus(unknown, failing);
      expect(missing).to.include({ sealed: true });
      expect(missing.seal_error).to.match(/wrapped by static key "k1", but the seal stanza has only "k2"/);
      await node.kill();

      const right = await node.start({ static: { current_key_id: 'k1', current_key: `file://${keyFile('k1')}` } });
      expect(await waitStatus(right, unsealed)).to.include({ sealed: false });
      await expectMarker(right, token);
    });

    it('keywarden operator init initializes it without unseal shares, with 5 recovery shares as vault, and prints the root token', async () => {
      const client = await node.start({ static: { current_key_id: 'k1', current_key: `file://${keyFile('k1')}` } });
      const run = await runCli(['operator', 'init', '-format=json'], { VAULT_ADDR: client.baseUrl, HOME: dir.path });
      expect(run.code, run.stderr).to.equal(0);
      const out = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(out).to.include({ unseal_shares: 1, recovery_keys_shares: 5, recovery_keys_threshold: 3 });
      expect(out.unseal_keys_b64).to.deep.equal([]);
      expect(out.recovery_keys_b64).to.have.length(5);
      expect((await client.get('sys/seal-status')).body).to.include({ initialized: true, sealed: false });
      await writeMarker(client, out.root_token as string);
      await expectMarker(client, out.root_token as string);
    });

    it('refuses the Shamir parameters at init, naming them, and leaves the server uninitialized', async () => {
      const client = await node.start({ static: { current_key_id: 'k1', current_key: `file://${keyFile('k1')}` } });
      const shamir = await client.put('sys/init', { secret_shares: 3, secret_threshold: 2 });
      expect(shamir.status).to.equal(400);
      expect(shamir.body.errors[0]).to.equal('parameters secret_shares,secret_threshold not applicable to seal type static');
      expect((await client.get('sys/init')).body.initialized).to.equal(false);
    });
  });

  describe('seal "transit" on a second Keywarden server', () => {
    let dir: { path: string; remove: () => Promise<void> };
    let node: Node;
    let transit: RunningServer | undefined;
    let transitClient: TestClient;
    let transitRoot: string;
    let transitAddress: string;
    let sealToken: string;

    /** The transit server, on LevelDB at a fixed port so it can stop and come back with its keys. */
    async function startTransit(port: number, dataDir: string, first: boolean): Promise<void> {
      const config = testConfig({ leveldbPath: dataDir });
      const server = await startServer({ config: { ...config, listeners: [{ ...config.listeners[0]!, address: `127.0.0.1:${port}` }] }, logger: pino({ level: 'silent' }) });
      transit = server;
      transitClient = new TestClient(server.address);
      if (first) {
        const init = await transitClient.put('sys/init', { secret_shares: 1, secret_threshold: 1 });
        transitUnsealKey = init.body.keys[0] as string;
        transitRoot = init.body.root_token as string;
      }
      const unseal = await transitClient.put('sys/unseal', { key: transitUnsealKey });
      expect(unseal.body.sealed, unseal.text).to.equal(false);
      transitClient.token = transitRoot;
    }
    let transitUnsealKey = '';

    const stanza = () => ({ transit: { address: transitAddress, token: sealToken, mount_path: 'transit/', key_name: 'autounseal' } });

    beforeEach(async () => {
      dir = await tempDir('keywarden-transit-seal-');
      node = new Node(dir.path, path.join(dir.path, 'data'));
      const port = await freePort();
      await startTransit(port, path.join(dir.path, 'transit-data'), true);
      transitAddress = `http://127.0.0.1:${port}`;
      expect((await transitClient.post('sys/mounts/transit', { type: 'transit' })).status).to.equal(204);
      expect((await transitClient.post('transit/keys/autounseal', {})).status).to.be.oneOf([200, 204]);
      const policy = 'path "transit/encrypt/autounseal" { capabilities = ["update"] }\npath "transit/decrypt/autounseal" { capabilities = ["update"] }';
      expect((await transitClient.put('sys/policies/acl/autounseal', { policy })).status).to.equal(204);
      // As Vault's transit seal documentation has it: an orphan, periodic token with only that policy.
      sealToken = await createToken(transitClient, { policies: ['autounseal'], no_parent: true, period: '24h' });
    });

    afterEach(async () => {
      await node.kill();
      await transit?.close(0);
      transit = undefined;
      await dir.remove();
    });

    it('is initialized, restarted with SIGKILL, and answers unsealed without any unseal call; the token is renewed', async () => {
      const client = await node.start(stanza());
      const token = await initAuto(client);
      expect(await waitStatus(client, unsealed)).to.include({ sealed: false, type: 'transit', recovery_seal: true });
      await writeMarker(client, token);
      const lookup = await transitClient.post('auth/token/lookup', { token: sealToken });
      expect(lookup.body.data.last_renewal_time, 'renewed with renew-self at start').to.be.a('number');

      await node.kill();
      const again = await node.start(stanza());
      expect(await waitStatus(again, unsealed)).to.include({ sealed: false, type: 'transit' });
      await expectMarker(again, token);
    });

    it('re-wraps the root key with a new transit key version at the next start, after which the old version is needed no more', async () => {
      const client = await node.start(stanza());
      const token = await initAuto(client);
      await writeMarker(client, token);
      await node.kill();

      expect((await transitClient.post('transit/keys/autounseal/rotate', {})).status).to.be.oneOf([200, 204]);
      const rotated = await node.start(stanza());
      expect(await waitStatus(rotated, unsealed)).to.include({ sealed: false });
      await loggedBy(node.child!, REWRAPPED);
      await node.kill();

      const config = await transitClient.post('transit/keys/autounseal/config', { min_decryption_version: 2 });
      expect(config.status, config.text).to.be.oneOf([200, 204]);
      const withoutOld = await node.start(stanza());
      expect(await waitStatus(withoutOld, unsealed)).to.include({ sealed: false });
      await expectMarker(withoutOld, token);
    });

    it('unseals with the old key version when the new one cannot wrap the root key (a decrypt-only token), and logs why', async () => {
      const client = await node.start(stanza());
      const token = await initAuto(client);
      await writeMarker(client, token);
      await node.kill();

      const decryptOnly = 'path "transit/decrypt/autounseal" { capabilities = ["update"] }';
      expect((await transitClient.put('sys/policies/acl/autounseal', { policy: decryptOnly })).status).to.equal(204);
      expect((await transitClient.post('transit/keys/autounseal/rotate', {})).status).to.be.oneOf([200, 204]);
      const again = await node.start(stanza());
      expect(await waitStatus(again, unsealed)).to.include({ sealed: false });
      await expectMarker(again, token);
      const mounts = await again.get('sys/mounts', { token });
      expect(mounts.status, 'the mount table is loaded, as after any unseal').to.equal(200);
      expect(node.child!.output()).to.contain('auto-unseal: the root key could not be wrapped again to follow a rotated seal key');
    });

    it('stays sealed while the transit server is down, says why, and unseals as soon as it answers', async () => {
      const client = await node.start(stanza());
      const token = await initAuto(client);
      await writeMarker(client, token);
      await node.kill();
      const port = Number(new URL(transitAddress).port);
      await transit!.close(0);
      transit = undefined;

      const waiting = await node.start(stanza());
      const down = await waitStatus(waiting, failing);
      expect(down).to.include({ sealed: true, initialized: true, type: 'transit' });
      expect(down.seal_error).to.match(/transit seal: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
      expect(String(down.seal_error)).not.to.contain(sealToken);

      await startTransit(port, path.join(dir.path, 'transit-data'), false);
      expect(await waitStatus(waiting, unsealed, 60_000)).to.include({ sealed: false });
      await expectMarker(waiting, token);
    });
  });
});

/** A loopback port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

