/** sys/rekey/*: new unseal key shares from a threshold of the current ones, over HTTP. */
import { expect } from 'chai';
import { initAndUnseal, startTestServer, tempDir } from '../../helpers/server.js';
import { TestClient, type TestResponse } from '../../helpers/http.js';
import { generateLargePgpKey, generatePgpKey, generatePgpKeys, type TestPgpKey } from '../../helpers/pgp.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import type { RunningServer } from '../../../core/server.js';

type Server = RunningServer & { client: TestClient };

/** Starts a rekey and submits `shares` of the current ones; answers the last response. */
async function rekeyWith(client: TestClient, shares: readonly string[], request: Record<string, unknown>) {
  const init = await client.put('sys/rekey/init', request);
  expect(init.status, init.text).to.equal(200);
  let last = init;
  for (const key of shares) {
    last = await client.put('sys/rekey/update', { key, nonce: init.body.nonce });
    expect(last.status, last.text).to.equal(200);
  }
  return last;
}

describe('sys/rekey', function () {
  this.timeout(60_000);

  describe('on LevelDB, across a restart', () => {
    let dir: { path: string; remove: () => Promise<void> };
    let server: Server | undefined;
    after(async () => {
      await server?.close();
      await dir?.remove();
    });

    it('rekeys 5/3 to 3/2: after a restart the new shares unseal and the old ones are refused', async () => {
      dir = await tempDir();
      server = await startTestServer({ leveldbPath: dir.path });
      const { keys: oldKeys, rootToken } = await initAndUnseal(server, 5, 3);

      const init = await server.client.put('sys/rekey/init', { secret_shares: 3, secret_threshold: 2 });
      expect(init.status).to.equal(200);
      expect(init.body).to.include({ started: true, t: 2, n: 3, progress: 0, required: 3, backup: false, verification_required: false });
      expect(init.body.nonce).to.match(/^[0-9a-f-]{36}$/);
      const first = await server.client.put('sys/rekey/update', { key: oldKeys[4], nonce: init.body.nonce });
      expect(first.body).to.include({ started: true, progress: 1, required: 3 });
      await server.client.put('sys/rekey/update', { key: oldKeys[1], nonce: init.body.nonce });
      const done = await server.client.put('sys/rekey/update', { key: oldKeys[2], nonce: init.body.nonce });
      expect(done.status).to.equal(200);
      expect(done.body).to.include({ complete: true, nonce: init.body.nonce, backup: false, verification_required: false, pgp_fingerprints: null });
      expect(done.body.keys).to.have.length(3);
      expect(done.body.keys_base64.map((k: string) => Buffer.from(k, 'base64').toString('hex'))).to.deep.equal(done.body.keys);
      expect((await server.client.get('sys/rekey/init')).body).to.include({ started: false, t: 0, n: 0, required: 2 });

      await server.close();
      server = await startTestServer({ leveldbPath: dir.path });
      const sealed = await server.client.get('sys/seal-status');
      expect(sealed.body).to.include({ sealed: true, t: 2, n: 3 });
      for (const old of oldKeys) {
        const refused = await server.client.put('sys/unseal', { key: old });
        expect(refused.status).to.equal(400);
        expect(refused.body.errors[0]).to.equal("'key' is not one of the current key shares");
      }
      expect((await server.client.put('sys/unseal', { key: done.body.keys_base64[2] })).body).to.include({ sealed: true, progress: 1 });
      expect((await server.client.put('sys/unseal', { key: done.body.keys[0] })).body).to.include({ sealed: false });
      const self = await server.client.get('auth/token/lookup-self', { token: rootToken });
      expect(self.status).to.equal(200);
      expect(self.body.data.policies).to.deep.equal(['root']);
    });
  });

  describe('on one server', () => {
    let server: Server;
    let keys: string[];
    before(async () => {
      server = await startTestServer();
      ({ keys } = await initAndUnseal(server, 3, 2));
    });
    afterEach(async () => {
      const status = await server.client.get('sys/rekey/init');
      if (status.body.started) await server.client.delete('sys/rekey/init');
    });
    after(() => server.close());

    it('needs a token (unlike Vault): anonymous callers can neither start, read nor cancel a rekey', async () => {
      const anonymous = new TestClient(server.address);
      expect((await anonymous.put('sys/rekey/init', { secret_shares: 1, secret_threshold: 1 })).status).to.equal(403);
      const init = await server.client.put('sys/rekey/init', { secret_shares: 1, secret_threshold: 1 });
      expect((await anonymous.get('sys/rekey/init')).status).to.equal(403);
      expect((await anonymous.delete('sys/rekey/init')).status).to.equal(403);
      expect((await anonymous.put('sys/rekey/update', { key: keys[0], nonce: init.body.nonce })).status).to.equal(403);
      expect((await server.client.get('sys/rekey/init')).body.started).to.equal(true);
    });

    it('refuses a wrong nonce, an unknown share and a repeated share, without counting them', async () => {
      const init = await server.client.put('sys/rekey/init', { secret_shares: 2, secret_threshold: 2 });
      const wrongNonce = await server.client.put('sys/rekey/update', { key: keys[0], nonce: 'a-guess' });
      expect(wrongNonce.status).to.equal(400);
      expect(wrongNonce.body.errors[0]).to.equal('incorrect nonce supplied');
      const noNonce = await server.client.put('sys/rekey/update', { key: keys[0] });
      expect(noNonce.status).to.equal(400);
      expect(noNonce.body.errors[0]).to.match(/'nonce' must be specified/);
      const unknown = await server.client.put('sys/rekey/update', { key: 'ab'.repeat(33), nonce: init.body.nonce });
      expect(unknown.status).to.equal(400);
      expect((await server.client.put('sys/rekey/update', { key: keys[0], nonce: init.body.nonce })).body.progress).to.equal(1);
      const again = await server.client.put('sys/rekey/update', { key: keys[0], nonce: init.body.nonce });
      expect(again.status).to.equal(400);
      expect(again.body.errors[0]).to.match(/already been provided/);
      expect((await server.client.get('sys/rekey/init')).body.progress).to.equal(1);
    });

    it('runs one rekey at a time, and cancels only with the rekey\'s own nonce when one is named', async () => {
      const init = await server.client.put('sys/rekey/init', { secret_shares: 2, secret_threshold: 2 });
      expect((await server.client.put('sys/rekey/init', { secret_shares: 2, secret_threshold: 2 })).body.errors[0]).to.equal('rekey already in progress');
      const wrong = await server.client.delete('sys/rekey/init', { body: { nonce: 'another' } });
      expect(wrong.status).to.equal(400);
      expect((await server.client.get('sys/rekey/init')).body.started).to.equal(true);
      expect((await server.client.delete(`sys/rekey/init?nonce=${init.body.nonce}`)).status).to.equal(204);
      expect((await server.client.get('sys/rekey/init')).body.started).to.equal(false);
    });

    it('refuses a bad configuration with a 400 naming the problem', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ secret_shares: 3, secret_threshold: 4 }, /secret_threshold cannot be larger than secret_shares/],
        [{ secret_shares: 2, secret_threshold: 2, backup: true }, /backup .* without providing PGP keys/],
        [{ secret_shares: 2, secret_threshold: 2, pgp_keys: ['keybase:alice', 'keybase:bob'] }, /pgp_keys\[0\]: Keybase keys/],
        [{ secret_shares: 2, secret_threshold: 2, stored_shares: 1 }, /stored_shares is not supported/],
      ];
      for (const [body, message] of cases) {
        const res = await server.client.put('sys/rekey/init', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.errors[0]).to.match(message);
      }
      expect((await server.client.get('sys/rekey/init')).body.started).to.equal(false);
    });

    it('with verification, the new shares take effect only once a threshold of them comes back', async () => {
      const done = await rekeyWith(server.client, keys.slice(0, 2), { secret_shares: 4, secret_threshold: 3, require_verification: true });
      expect(done.body).to.include({ complete: true, verification_required: true });
      const verificationNonce = done.body.verification_nonce as string;
      expect(verificationNonce).to.match(/^[0-9a-f-]{36}$/).and.not.equal(done.body.nonce);
      expect((await server.client.get('sys/seal-status')).body).to.include({ t: 2, n: 3 });
      expect((await server.client.put('sys/rekey/update', { key: keys[2], nonce: done.body.nonce })).body.errors[0]).to.match(/verification must be performed/);

      const status = await server.client.get('sys/rekey/verify');
      expect(status.body).to.deep.equal({ nonce: verificationNonce, started: true, t: 3, n: 4, progress: 0 });
      expect((await server.client.put('sys/rekey/verify', { key: keys[0], nonce: verificationNonce })).status).to.equal(400);
      await server.client.put('sys/rekey/verify', { key: done.body.keys[3], nonce: verificationNonce });
      const restarted = await server.client.delete('sys/rekey/verify');
      expect(restarted.body).to.include({ started: true, progress: 0 });
      expect(restarted.body.nonce).to.not.equal(verificationNonce);
      expect((await server.client.put('sys/rekey/verify', { key: done.body.keys[3], nonce: verificationNonce })).body.errors[0]).to.equal('incorrect nonce supplied');

      const nonce = restarted.body.nonce as string;
      expect((await server.client.put('sys/rekey/verify', { key: done.body.keys[0], nonce })).body.progress).to.equal(1);
      await server.client.put('sys/rekey/verify', { key: done.body.keys[1], nonce });
      const verified = await server.client.put('sys/rekey/verify', { key: done.body.keys[2], nonce });
      expect(verified.body).to.deep.equal({ nonce, complete: true });
      expect((await server.client.get('sys/seal-status')).body).to.include({ t: 3, n: 4 });
      keys = done.body.keys;

      // Back to the 3/2 the other tests use.
      const back = await rekeyWith(server.client, keys.slice(0, 3), { secret_shares: 3, secret_threshold: 2 });
      keys = back.body.keys;
    });

    it('a cancelled verification leaves the current shares in use', async () => {
      const done = await rekeyWith(server.client, keys.slice(0, 2), { secret_shares: 2, secret_threshold: 2, require_verification: true });
      expect((await server.client.delete('sys/rekey/init')).status).to.equal(204);
      expect((await server.client.get('sys/rekey/verify')).body.errors[0]).to.equal('no rekey configuration found');
      expect((await server.client.get('sys/seal-status')).body).to.include({ t: 2, n: 3 });
      const again = await rekeyWith(server.client, [keys[1]!, keys[2]!], { secret_shares: 3, secret_threshold: 2 });
      expect(again.body.complete).to.equal(true);
      expect(done.body.keys).to.not.deep.equal(again.body.keys);
      keys = again.body.keys;
    });
  });

  describe('with PGP keys', () => {
    let server: Server;
    let keys: string[];
    let pgp: TestPgpKey[];
    let done: TestResponse;
    before(async () => {
      server = await startTestServer();
      ({ keys } = await initAndUnseal(server, 1, 1));
      pgp = await generatePgpKeys(3);
    });
    afterEach(async () => {
      const status = await server.client.get('sys/rekey/init');
      if (status.body.started) await server.client.delete('sys/rekey/init');
    });
    after(() => server.close());

    it('encrypts each new share to its key; the decrypted shares unseal the server', async () => {
      done = await rekeyWith(server.client, [keys[0]!], { secret_shares: 3, secret_threshold: 2, pgp_keys: pgp.map((k) => k.publicKeyBase64), backup: true });
      expect(done.body).to.include({ complete: true, backup: true });
      expect(done.body.pgp_fingerprints).to.deep.equal(pgp.map((k) => k.fingerprint));
      const shares = await Promise.all((done.body.keys_base64 as string[]).map((message, i) => pgp[i]!.decrypt(message)));
      for (const share of shares) expect(share).to.match(/^[0-9a-f]{66}$/);
      expect(shares).to.not.include(keys[0]);

      expect((await server.client.put('sys/seal')).status).to.equal(204);
      expect((await server.client.put('sys/unseal', { key: keys[0] })).status).to.equal(400);
      await server.client.put('sys/unseal', { key: shares[2] });
      expect((await server.client.put('sys/unseal', { key: shares[0] })).body.sealed).to.equal(false);
    });

    it('keeps the encrypted shares by fingerprint at sys/rekey/backup until they are deleted', async () => {
      const backup = await server.client.get('sys/rekey/backup');
      expect(backup.status).to.equal(200);
      expect(backup.body.data.nonce).to.equal(done.body.nonce);
      pgp.forEach((key, i) => {
        expect(backup.body.data.keys[key.fingerprint]).to.deep.equal([done.body.keys[i]]);
        expect(backup.body.data.keys_base64[key.fingerprint]).to.deep.equal([done.body.keys_base64[i]]);
      });
      expect(backup.body.keys).to.deep.equal(backup.body.data.keys);
      expect((await server.client.delete('sys/rekey/backup')).status).to.equal(204);
      const gone = await server.client.get('sys/rekey/backup');
      expect(gone.status).to.equal(400);
      expect(gone.body.errors[0]).to.equal('no backed-up keys found');
    });

    it('refuses a pgp_keys list without one key per new share', async () => {
      const res = await server.client.put('sys/rekey/init', { secret_shares: 3, secret_threshold: 2, pgp_keys: [pgp[0]!.publicKeyBase64] });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.equal('pgp_keys must hold one key per new share: got 1 keys for 3 shares');
    });

    it('checks the count and the state before parsing any key', async () => {
      const junk = ['not a key', 'not a key either', 'nor this'];
      const mismatch = await server.client.put('sys/rekey/init', { secret_shares: 2, secret_threshold: 2, pgp_keys: junk });
      expect(mismatch.body.errors[0]).to.equal('pgp_keys must hold one key per new share: got 3 keys for 2 shares');
      const init = await server.client.put('sys/rekey/init', { secret_shares: 1, secret_threshold: 1 });
      expect(init.status).to.equal(200);
      const busy = await server.client.put('sys/rekey/init', { secret_shares: 3, secret_threshold: 2, pgp_keys: junk });
      expect(busy.status).to.equal(400);
      expect(busy.body.errors[0]).to.equal('rekey already in progress');
    });

    it('refuses a key of more than 64 KiB, naming its position and the limit, and starts no rekey', async () => {
      const large = await generateLargePgpKey(64 * 1024);
      const res = await server.client.put('sys/rekey/init', {
        secret_shares: 3,
        secret_threshold: 2,
        pgp_keys: [pgp[0]!.publicKeyBase64, large.publicKeyBase64, pgp[2]!.publicKeyBase64],
      });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.match(/^pgp_keys\[1\]: a public key may be at most 65536 bytes; this one has \d+$/);
      expect((await server.client.get('sys/rekey/init')).body.started).to.equal(false);
    });

    it('reads many keys one at a time: the event loop turns while they are parsed', async () => {
      const rsa = await generatePgpKey('operator', 'rsa');
      const texts = Array.from({ length: 48 }, () => rsa.publicKeyBase64);
      const { result, turns } = await turnsDuring(() => server.client.put('sys/rekey/init', { secret_shares: 48, secret_threshold: 2, pgp_keys: texts }));
      expect(result.status, result.text).to.equal(200);
      expect(result.body.pgp_fingerprints).to.have.length(48);
      expect(turns).to.be.at.least(48);
    });
  });
});