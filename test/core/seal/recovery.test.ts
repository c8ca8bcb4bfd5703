/**
 * Recovery keys (issue #32, item 2), over HTTP against a server with a static auto seal: sys/init
 * splits a recovery key, sys/seal-status shows its shares, a threshold of them authorizes root
 * generation and their own rekey (sys/rekey-recovery-key/*), they never unseal, and with
 * recovery_shares = 0 they are created later by an authenticated call, as in OpenBao 2.4.
 */
import { expect } from 'chai';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { TestClient } from '../../helpers/http.js';
import { generatePgpKeys } from '../../helpers/pgp.js';
import { initAndUnseal, startTestServer, tempDir } from '../../helpers/server.js';
import { initWithRecovery, startAutoSealedServer, staticSeal, type AutoSealedServer } from '../../helpers/seal.js';

/** Runs Vault's unauthenticated root generation with `shares`; answers the new root token. */
async function generateRoot(client: TestClient, shares: readonly string[]): Promise<string> {
  const start = await client.put('sys/generate-root/attempt', {});
  expect(start.status, start.text).to.equal(200);
  const { otp, nonce } = start.body as { otp: string; nonce: string };
  let last = start;
  for (const key of shares) {
    last = await client.put('sys/generate-root/update', { key, nonce });
    expect(last.status, last.text).to.equal(200);
  }
  expect(last.body.complete).to.equal(true);
  const decoded = await client.put('sys/decode-token', { encoded_token: last.body.encoded_token, otp });
  expect(decoded.status, decoded.text).to.equal(200);
  return decoded.body.data.token as string;
}

async function expectRootToken(client: TestClient, token: string): Promise<void> {
  const self = await client.get('auth/token/lookup-self', { token });
  expect(self.status, self.text).to.equal(200);
  expect(self.body.data.policies).to.deep.equal(['root']);
}

/** Rekeys the recovery key to `shares`/`threshold` with `current` shares; answers the new shares. */
async function rekeyRecovery(client: TestClient, current: readonly string[], shares: number, threshold: number): Promise<string[]> {
  const init = await client.put('sys/rekey-recovery-key/init', { secret_shares: shares, secret_threshold: threshold });
  expect(init.status, init.text).to.equal(200);
  expect(init.body).to.include({ started: true, t: threshold, n: shares, progress: 0, required: current.length });
  let last = init;
  for (const key of current) {
    last = await client.put('sys/rekey-recovery-key/update', { key, nonce: init.body.nonce });
    expect(last.status, last.text).to.equal(200);
  }
  expect(last.body.complete).to.equal(true);
  return last.body.keys as string[];
}

describe('recovery keys with an auto seal', function () {
  this.timeout(60_000);
  let server: AutoSealedServer;
  let anonymous: TestClient;
  /** Runs after the server is closed (a data directory to remove). */
  let cleanup: (() => Promise<void>) | undefined;

  afterEach(async () => {
    await server?.close();
    await cleanup?.();
    cleanup = undefined;
  });

  describe('initialized with 5 recovery shares and a threshold of 3', () => {
    let recoveryKeys: string[];
    let rootToken: string;

    beforeEach(async () => {
      server = await startAutoSealedServer();
      anonymous = new TestClient(server.address);
      ({ recoveryKeys, rootToken } = await initWithRecovery(server, 5, 3));
    });

    it('sys/init answers the recovery shares in hex and base64, no unseal shares, and the node is unsealed', async () => {
      expect(recoveryKeys).to.have.length(5);
      for (const key of recoveryKeys) expect(key).to.match(/^[0-9a-f]{66}$/);
      expect(new Set(recoveryKeys).size).to.equal(5);
      const status = (await anonymous.get('sys/seal-status')).body;
      expect(status).to.include({ type: 'static', initialized: true, sealed: false, recovery_seal: true, t: 3, n: 5 });
      await expectRootToken(anonymous, rootToken);
    });

    it('a threshold of recovery shares generates a new root token through sys/generate-root', async () => {
      const status = await anonymous.get('sys/generate-root/attempt');
      expect(status.body).to.include({ started: false, required: 3 });
      const token = await generateRoot(anonymous, [recoveryKeys[4]!, recoveryKeys[0]!, recoveryKeys[2]!]);
      expect(token).to.not.equal(rootToken);
      await expectRootToken(anonymous, token);
    });

    it('refuses a wrong, a short and a repeated share without counting it', async () => {
      const start = await anonymous.put('sys/generate-root/attempt', {});
      const nonce = start.body.nonce as string;
      const wrong = await anonymous.put('sys/generate-root/update', { key: 'ab'.repeat(33), nonce });
      expect(wrong.status).to.equal(400);
      expect(wrong.body.errors[0]).to.equal("'key' is not one of the current key shares");
      const short = await anonymous.put('sys/generate-root/update', { key: recoveryKeys[0]!.slice(0, 40), nonce });
      expect(short.status).to.equal(400);
      expect(short.body.errors[0]).to.equal("'key' must be 33 bytes (hex or base64), got 20");
      expect((await anonymous.put('sys/generate-root/update', { key: recoveryKeys[1], nonce })).body.progress).to.equal(1);
      const again = await anonymous.put('sys/generate-root/update', { key: recoveryKeys[1], nonce });
      expect(again.status).to.equal(400);
      expect(again.body.errors[0]).to.equal('given key has already been provided during this generation operation');
      expect((await anonymous.get('sys/generate-root/attempt')).body.progress).to.equal(1);
    });

    it('recovery shares never unseal: a sealed node refuses them, and stays sealed', async () => {
      expect((await server.client.put('sys/seal')).status).to.equal(204);
      for (const key of recoveryKeys.slice(0, 3)) {
        const res = await anonymous.put('sys/unseal', { key });
        expect(res.status).to.equal(400);
        expect(res.body.errors[0]).to.match(/the static seal unseals this store at start; it takes no unseal keys/);
      }
      expect((await anonymous.get('sys/seal-status')).body).to.include({ sealed: true, progress: 0, t: 3, n: 5 });
    });

    it('rekeys the recovery key: the new shares authorize root generation, the old ones are refused', async () => {
      const newKeys = await rekeyRecovery(server.client, recoveryKeys.slice(1, 4), 3, 2);
      expect(newKeys).to.have.length(3);
      expect((await anonymous.get('sys/seal-status')).body).to.include({ t: 2, n: 3, sealed: false });

      const start = await anonymous.put('sys/generate-root/attempt', {});
      const old = await anonymous.put('sys/generate-root/update', { key: recoveryKeys[0], nonce: start.body.nonce });
      expect(old.status).to.equal(400);
      expect(old.body.errors[0]).to.equal("'key' is not one of the current key shares");
      await anonymous.delete('sys/generate-root/attempt', { body: { nonce: start.body.nonce } });
      await expectRootToken(anonymous, await generateRoot(anonymous, [newKeys[2]!, newKeys[0]!]));
    });

    it('with verification, the new recovery shares take effect only once a threshold of them comes back', async () => {
      const init = await server.client.put('sys/rekey-recovery-key/init', { secret_shares: 2, secret_threshold: 2, require_verification: true });
      let done = init;
      for (const key of recoveryKeys.slice(0, 3)) done = await server.client.put('sys/rekey-recovery-key/update', { key, nonce: init.body.nonce });
      expect(done.body).to.include({ complete: true, verification_required: true });
      const newKeys = done.body.keys as string[];
      // Not in effect yet: the current shares still count.
      expect((await anonymous.get('sys/seal-status')).body).to.include({ t: 3, n: 5 });
      const verifyNonce = done.body.verification_nonce as string;
      await server.client.put('sys/rekey-recovery-key/verify', { key: newKeys[0], nonce: verifyNonce });
      const verified = await server.client.put('sys/rekey-recovery-key/verify', { key: newKeys[1], nonce: verifyNonce });
      expect(verified.status, verified.text).to.equal(200);
      expect(verified.body).to.deep.equal({ nonce: verifyNonce, complete: true });
      expect((await anonymous.get('sys/seal-status')).body).to.include({ t: 2, n: 2 });
      await expectRootToken(anonymous, await generateRoot(anonymous, newKeys));
    });

    it('the recovery rekey needs a token with sudo on sys/rekey-recovery-key/init', async () => {
      expect((await anonymous.put('sys/rekey-recovery-key/init', { secret_shares: 1, secret_threshold: 1 })).status).to.equal(403);
      await server.client.put('sys/policies/acl/rekeyer', { policy: 'path "sys/rekey-recovery-key/*" { capabilities = ["update", "read"] }' });
      const token = (await server.client.post('auth/token/create', { policies: ['rekeyer'] })).body.auth.client_token as string;
      expect((await anonymous.put('sys/rekey-recovery-key/init', { secret_shares: 1, secret_threshold: 1 }, { token })).status).to.equal(403);
      expect((await server.client.get('sys/rekey-recovery-key/init')).body.started).to.equal(false);
    });

    it('sys/rekey refuses an auto seal, pointing at sys/rekey-recovery-key', async () => {
      const res = await server.client.put('sys/rekey/init', { secret_shares: 3, secret_threshold: 2 });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.match(/there are no unseal key shares to rekey; the recovery key's shares are rekeyed at sys\/rekey-recovery-key/);
    });
  });

  describe('initialized with recovery_shares = 0 (OpenBao 2.4)', () => {
    beforeEach(async () => {
      server = await startAutoSealedServer();
      anonymous = new TestClient(server.address);
    });

    it('has no shares: root generation is refused naming the remedy, and sys/rekey-recovery-key/init answers the new shares at once', async () => {
      const init = await server.client.put('sys/init', { recovery_shares: 0, recovery_threshold: 0 });
      expect(init.status, init.text).to.equal(200);
      expect(init.body).to.not.have.property('recovery_keys');
      server.client.token = init.body.root_token as string;
      expect((await anonymous.get('sys/seal-status')).body).to.include({ sealed: false, t: 0, n: 0, recovery_seal: true });

      const refused = await anonymous.put('sys/generate-root/attempt', {});
      expect(refused.status).to.equal(400);
      expect(refused.body.errors[0]).to.match(/there are no recovery key shares to authorize root generation.*sys\/rekey-recovery-key\/init/);

      expect((await anonymous.put('sys/rekey-recovery-key/init', { secret_shares: 3, secret_threshold: 2 })).status).to.equal(403);
      const created = await server.client.put('sys/rekey-recovery-key/init', { secret_shares: 3, secret_threshold: 2 });
      expect(created.status, created.text).to.equal(200);
      expect(created.body).to.include({ complete: true, t: 2, n: 3 });
      const keys = created.body.keys as string[];
      expect(keys).to.have.length(3);
      expect((await server.client.get('sys/rekey-recovery-key/init')).body.started).to.equal(false);
      expect((await anonymous.get('sys/seal-status')).body).to.include({ t: 2, n: 3 });
      await expectRootToken(anonymous, await generateRoot(anonymous, keys.slice(1)));
    });

    it('an init without recovery parameters has none, as OpenBao', async () => {
      const init = await server.client.put('sys/init', {});
      expect(init.status, init.text).to.equal(200);
      expect(init.body.keys).to.deep.equal([]);
      expect((await anonymous.get('sys/seal-status')).body).to.include({ t: 0, n: 0 });
    });
  });

  describe('at init', () => {
    beforeEach(async () => {
      server = await startAutoSealedServer();
      anonymous = new TestClient(server.address);
    });

    it('refuses a bad recovery configuration with a 400 naming the field, and leaves the server uninitialized', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ recovery_shares: 3, recovery_threshold: 4 }, 'recovery_threshold cannot be larger than recovery_shares'],
        [{ recovery_shares: 3, recovery_threshold: 1 }, 'recovery_threshold must be greater than one for multiple shares'],
        [{ recovery_shares: 3 }, 'recovery_threshold must be at least 1'],
        [{ recovery_shares: 0, recovery_threshold: 2 }, 'recovery_threshold must be 0 when recovery_shares is 0'],
        [{ recovery_shares: 2, recovery_threshold: 2, recovery_pgp_keys: ['a'] }, 'recovery_pgp_keys must hold one key per recovery share: got 1 keys for 2 shares'],
        [{ secret_shares: 3, secret_threshold: 2, recovery_shares: 3, recovery_threshold: 2 }, 'parameters secret_shares,secret_threshold not applicable to seal type static'],
      ];
      for (const [body, message] of cases) {
        const res = await anonymous.put('sys/init', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.errors[0]).to.equal(message);
      }
      expect((await anonymous.get('sys/init')).body.initialized).to.equal(false);
    });

    it('encrypts each recovery share to its recovery_pgp_keys key; the decrypted shares authorize root generation', async () => {
      const pgp = await generatePgpKeys(2);
      const init = await anonymous.put('sys/init', { recovery_shares: 2, recovery_threshold: 2, recovery_pgp_keys: pgp.map((k) => k.publicKeyBase64) });
      expect(init.status, init.text).to.equal(200);
      const encrypted = init.body.recovery_keys_base64 as string[];
      const shares = await Promise.all(encrypted.map((message, i) => pgp[i]!.decrypt(message)));
      for (const share of shares) expect(share).to.match(/^[0-9a-f]{66}$/);
      await expectRootToken(anonymous, await generateRoot(anonymous, shares));
    });
  });

  describe('with a Shamir seal', () => {
    it('there are no recovery keys: sys/rekey-recovery-key refuses, pointing at sys/rekey, and recovery parameters at init are refused', async () => {
      const shamir = await startTestServer();
      try {
        const refused = await shamir.client.put('sys/init', { secret_shares: 1, secret_threshold: 1, recovery_shares: 3, recovery_threshold: 2 });
        expect(refused.status).to.equal(400);
        expect(refused.body.errors[0]).to.equal('parameters recovery_shares,recovery_threshold not applicable to seal type shamir');
        await initAndUnseal(shamir, 1, 1);
        const res = await shamir.client.put('sys/rekey-recovery-key/init', { secret_shares: 3, secret_threshold: 2 });
        expect(res.status).to.equal(400);
        expect(res.body.errors[0]).to.equal('the store has a Shamir seal: it has no recovery keys; its unseal key shares are rekeyed at sys/rekey');
        expect((await shamir.client.get('sys/seal-status')).body).to.include({ type: 'shamir', recovery_seal: false, t: 1, n: 1 });
      } finally {
        await shamir.close();
      }
    });
  });

  describe('across a restart', () => {
    it('the recovery shares still authorize root generation on the same store', async () => {
      const dir = await tempDir('keywarden-recovery-');
      cleanup = dir.remove;
      const leveldbPath = path.join(dir.path, 'data');
      const seal = staticSeal();
      server = await startAutoSealedServer({ leveldbPath, seal });
      const { recoveryKeys } = await initWithRecovery(server, 3, 2);
      await server.close();
      server = await startAutoSealedServer({ leveldbPath, seal });
      anonymous = new TestClient(server.address);
      // Until the node has unsealed itself (in the background: slow on a loaded machine) and loaded what it serves.
      const ready = async () => (await anonymous.get('sys/seal-status')).body.sealed === false && (await anonymous.get('sys/generate-root/attempt')).status !== 503;
      for (let i = 0; i < 600 && !(await ready()); i++) await delay(50);
      expect((await anonymous.get('sys/seal-status')).body).to.include({ sealed: false, t: 2, n: 3 });
      await expectRootToken(anonymous, await generateRoot(anonymous, recoveryKeys.slice(0, 2)));
    });
  });
});
