/**
 * Seal migration (issue #32, item 3): a production server initialized with Shamir shares is given
 * a transit seal stanza, says a migration is pending (seal-status `migration: true`), refuses the
 * shares without `migrate`, and moves to the seal when unsealed with the old shares and
 * `-migrate`; from then on it unseals itself, and the old shares are its recovery shares. From the
 * transit seal it moves to a static seal with the old stanza disabled beside the new one, and back
 * to Shamir with the static stanza disabled and the recovery shares with `-migrate`. A kv secret and
 * a transit ciphertext written under Shamir are there at every step.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runCli } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/server.js';
import { initWithRecovery, startAutoSealedServer, staticSeal, type AutoSealedServer } from '../../helpers/seal.js';
import type { StaticSealConfig } from '../../../core/config/settings.js';
import type { TestClient } from '../../helpers/http.js';
import { failing, REWRAPPED, SealedNode, TransitServer, unsealed, waitStatus } from '../../helpers/auto-seal.js';

/**
 * Logged once the auto-unsealed node has loaded its mounts: seal-status answers unsealed as soon as
 * the barrier opens, a little before.
 */
const AUTO_UNSEALED = 'auto-unseal: unsealed';

/** What the round trip must find again: a kv secret, and a ciphertext of the store's transit key. */
interface Data {
  readonly password: string;
  readonly ciphertext: string;
}

async function writeData(client: TestClient, token: string): Promise<Data> {
  expect((await client.post('sys/mounts/secret', { type: 'kv' }, { token })).status).to.equal(204);
  expect((await client.post('sys/mounts/crypto', { type: 'transit' }, { token })).status).to.equal(204);
  expect((await client.post('crypto/keys/app', {}, { token })).status).to.be.oneOf([200, 204]);
  const password = randomBytes(16).toString('hex');
  expect((await client.put('secret/app', { password }, { token })).status).to.equal(204);
  const encrypted = await client.post('crypto/encrypt/app', { plaintext: Buffer.from(password).toString('base64') }, { token });
  expect(encrypted.status, encrypted.text).to.equal(200);
  return { password, ciphertext: encrypted.body.data.ciphertext as string };
}

async function expectData(client: TestClient, token: string, data: Data): Promise<void> {
  const secret = await client.get('secret/app', { token });
  expect(secret.status, secret.text).to.equal(200);
  expect(secret.body.data.password).to.equal(data.password);
  const decrypted = await client.post('crypto/decrypt/app', { ciphertext: data.ciphertext }, { token });
  expect(decrypted.status, decrypted.text).to.equal(200);
  expect(Buffer.from(decrypted.body.data.plaintext as string, 'base64').toString()).to.equal(data.password);
}

describe('seal migration: a Shamir store moves to an auto seal, from one auto seal to another, and back to Shamir, with its data', function () {
  this.timeout(180_000);
  let dir: { path: string; remove: () => Promise<void> };
  let node: SealedNode;
  let transit: TransitServer;

  beforeEach(async () => {
    dir = await tempDir('keywarden-seal-migration-');
    node = new SealedNode(dir.path, path.join(dir.path, 'data'));
    transit = await new TransitServer(path.join(dir.path, 'transit')).create();
  });

  afterEach(async () => {
    await node.kill();
    await transit.stop();
    await dir.remove();
  });

  it('Shamir → transit → static → Shamir: the same shares unseal, then recover, then unseal again, the data intact at each step', async () => {
    const shamir = await node.start(undefined);
    const init = await shamir.put('sys/init', { secret_shares: 3, secret_threshold: 2 });
    expect(init.status, init.text).to.equal(200);
    const keys = init.body.keys as string[];
    const token = init.body.root_token as string;
    for (const key of keys.slice(0, 2)) expect((await shamir.put('sys/unseal', { key })).status).to.equal(200);
    const data = await writeData(shamir, token);
    await node.kill();

    const pending = await node.start(transit.stanza());
    const waiting = await waitStatus(pending, failing);
    expect(waiting).to.include({ type: 'shamir', initialized: true, sealed: true, migration: true, t: 2, n: 3 });
    expect(waiting.seal_error).to.match(/a seal migration is pending/);
    const plain = await pending.put('sys/unseal', { key: keys[0] });
    expect(plain.status).to.equal(400);
    expect(plain.body.errors[0]).to.match(/a seal migration is pending: .*unseal with the shares and migrate=true/);

    const first = await runCli(['operator', 'unseal', '-migrate', keys[1]!], { VAULT_ADDR: pending.baseUrl, HOME: dir.path });
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.match(/Seal Migration in Progress\s+true/);
    const second = await pending.put('sys/unseal', { key: keys[2], migrate: true });
    expect(second.status, second.text).to.equal(200);
    // The old shares are the recovery shares now, as in Vault.
    expect(second.body).to.include({ sealed: false, type: 'transit', migration: false, recovery_seal: true, t: 2, n: 3 });
    await expectData(pending, token, data);
    await node.kill();

    const auto = await node.start(transit.stanza());
    expect(await waitStatus(auto, unsealed)).to.include({ sealed: false, type: 'transit', recovery_seal: true, t: 2, n: 3 });
    await node.logged(AUTO_UNSEALED);
    await expectData(auto, token, data);
    await node.kill();

    const keyFile = path.join(dir.path, 'static.key');
    await writeFile(keyFile, randomBytes(32), { mode: 0o600 });
    const staticSeal = { static: { current_key_id: 'k1', current_key: `file://${keyFile}` } };
    const moving = await node.start([transit.stanza({ priority: 1, disabled: 'true' }), { static: { ...staticSeal.static, priority: 2 } }]);
    expect(await waitStatus(moving, unsealed)).to.include({ sealed: false, type: 'static' });
    await node.logged(REWRAPPED);
    await node.kill();

    await transit.stop();
    const moved = await node.start(staticSeal);
    expect(await waitStatus(moved, unsealed)).to.include({ sealed: false, type: 'static' });
    await node.logged(AUTO_UNSEALED);
    await expectData(moved, token, data);
    // The old shares unseal nothing while the seal does.
    expect((await moved.put('sys/seal', {}, { token })).status).to.equal(204);
    const shares = await moved.put('sys/unseal', { key: keys[0] });
    expect(shares.status).to.equal(400);
    expect(shares.body.errors[0]).to.match(/the static seal unseals this store at start; it takes no unseal keys/);
    await node.kill();

    const back = await node.start({ static: { ...staticSeal.static, disabled: 'true' } });
    expect(await waitStatus(back, () => true)).to.include({ type: 'shamir', initialized: true, sealed: true, migration: true, recovery_seal: true, t: 2, n: 3, progress: 0 });
    const unmigrated = await back.put('sys/unseal', { key: keys[0] });
    expect(unmigrated.status).to.equal(400);
    expect(unmigrated.body.errors[0]).to.match(/a seal migration to Shamir is pending: .*unseal with the recovery shares and migrate=true/);
    const recovery = await runCli(['operator', 'unseal', '-migrate', keys[0]!], { VAULT_ADDR: back.baseUrl, HOME: dir.path });
    expect(recovery.code, recovery.stderr).to.equal(0);
    expect(recovery.stdout).to.match(/Seal Migration in Progress\s+true/);
    const done = await back.put('sys/unseal', { key: keys[1], migrate: true });
    expect(done.status, done.text).to.equal(200);
    expect(done.body).to.include({ sealed: false, type: 'shamir', migration: false, recovery_seal: false, t: 2, n: 3 });
    await expectData(back, token, data);
    await node.kill();

    const plainShamir = await node.start(undefined);
    expect(await waitStatus(plainShamir, () => true)).to.include({ type: 'shamir', sealed: true, migration: false, recovery_seal: false, t: 2, n: 3 });
    expect((await plainShamir.put('sys/unseal', { key: keys[2] })).body).to.include({ sealed: true, progress: 1 });
    expect((await plainShamir.put('sys/unseal', { key: keys[0] })).body).to.include({ sealed: false });
    await expectData(plainShamir, token, data);
  });

  it('refuses migrate when no migration is pending, and leaves the progress as it was', async () => {
    const shamir = await node.start(undefined);
    const init = await shamir.put('sys/init', { secret_shares: 3, secret_threshold: 2 });
    const keys = init.body.keys as string[];
    expect((await shamir.put('sys/unseal', { key: keys[0] })).body).to.include({ progress: 1 });
    const refused = await shamir.put('sys/unseal', { key: keys[1], migrate: true });
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0]).to.match(/^migrate: no seal migration is pending/);
    expect((await shamir.get('sys/seal-status')).body).to.include({ sealed: true, progress: 1, migration: false });
  });

  it('answers 503 and changes nothing when the disabled seal cannot be reached at the threshold, and migrates once it answers', async () => {
    const auto = await node.start(transit.stanza());
    const init = await auto.put('sys/init', { recovery_shares: 3, recovery_threshold: 2 });
    expect(init.status, init.text).to.equal(200);
    const keys = init.body.recovery_keys as string[];
    const token = init.body.root_token as string;
    await waitStatus(auto, unsealed);
    const data = await writeData(auto, token);
    await node.kill();

    await transit.stop();
    const back = await node.start(transit.stanza({ disabled: 'true' }));
    expect((await back.put('sys/unseal', { key: keys[0], migrate: true })).body).to.include({ sealed: true, progress: 1 });
    const unreachable = await back.put('sys/unseal', { key: keys[1], migrate: true });
    expect(unreachable.status, unreachable.text).to.equal(503);
    expect((await back.get('sys/seal-status')).body).to.include({ type: 'shamir', sealed: true, migration: true, recovery_seal: true, progress: 0 });

    await transit.restart();
    for (const key of keys.slice(1, 3)) expect((await back.put('sys/unseal', { key, migrate: true })).status).to.equal(200);
    expect((await back.get('sys/seal-status')).body).to.include({ type: 'shamir', sealed: false, migration: false, t: 2, n: 3 });
    await expectData(back, token, data);
  });
});

describe('seal migration back to Shamir: what is refused leaves the store as it was', function () {
  this.timeout(60_000);
  let dir: { path: string; remove: () => Promise<void> };
  let server: AutoSealedServer | undefined;

  beforeEach(async () => {
    dir = await tempDir('keywarden-to-shamir-');
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
    await dir.remove();
  });

  /** A store auto-sealed by `seal` and initialized with recovery shares; the server is closed. */
  async function autoSealedStore(seal: StaticSealConfig, shares: number, threshold: number): Promise<string[]> {
    server = await startAutoSealedServer({ leveldbPath: dir.path, seal });
    const { recoveryKeys } = await initWithRecovery(server, shares, threshold);
    await server.close();
    server = undefined;
    return recoveryKeys;
  }

  /** Starts the store with its seal disabled; answers a client. */
  async function disabled(seal: StaticSealConfig): Promise<TestClient> {
    server = await startAutoSealedServer({ leveldbPath: dir.path, seal, disabled: true });
    return server.client;
  }

  it('refuses recovery shares without migrate, and a share that is no recovery share, keeping the progress', async () => {
    const seal = staticSeal();
    const keys = await autoSealedStore(seal, 3, 2);
    const client = await disabled(seal);
    expect((await client.put('sys/unseal', { key: keys[0], migrate: true })).body).to.include({ progress: 1 });
    const unmigrated = await client.put('sys/unseal', { key: keys[1] });
    expect(unmigrated.status).to.equal(400);
    expect(unmigrated.body.errors[0]).to.match(/a seal migration to Shamir is pending/);
    const stranger = await client.put('sys/unseal', { key: randomBytes(33).toString('base64'), migrate: true });
    expect(stranger.status).to.equal(400);
    expect((await client.get('sys/seal-status')).body).to.include({ sealed: true, progress: 1, migration: true });
    expect((await client.put('sys/unseal', { key: keys[2], migrate: true })).body).to.include({ sealed: false, type: 'shamir' });
  });

  it('refuses to migrate a store without recovery shares, naming how to make them', async () => {
    const seal = staticSeal();
    await autoSealedStore(seal, 0, 0);
    const client = await disabled(seal);
    const refused = await client.put('sys/unseal', { key: randomBytes(33).toString('base64'), migrate: true });
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0]).to.match(/the store has no recovery shares .*sys\/rekey-recovery-key/);
    expect((await client.get('sys/seal-status')).body).to.include({ sealed: true, migration: true, t: 0, n: 0 });
  });

  it('refuses with 400 a disabled seal whose key cannot open the stored root key, and the store still unseals with the right one', async () => {
    const seal = staticSeal();
    const keys = await autoSealedStore(seal, 3, 2);
    const client = await disabled({ ...staticSeal(), currentKeyId: seal.currentKeyId });
    expect((await client.put('sys/unseal', { key: keys[0], migrate: true })).status).to.equal(200);
    const wrongKey = await client.put('sys/unseal', { key: keys[1], migrate: true });
    expect(wrongKey.status, wrongKey.text).to.equal(400);
    expect(wrongKey.body.errors[0]).to.match(/^migrate: the disabled static seal cannot open the stored root key/);
    expect((await client.get('sys/seal-status')).body).to.include({ sealed: true, migration: true, recovery_seal: true, progress: 0 });
    await server!.close();
    server = await startAutoSealedServer({ leveldbPath: dir.path, seal });
    expect(await waitStatus(server.client, unsealed)).to.include({ type: 'static', sealed: false, t: 2, n: 3 });
  });
});
