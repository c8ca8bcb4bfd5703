/** sys/init with pgp_keys and root_token_pgp_key: shares and root token encrypted to their holders. */
import { expect } from 'chai';
import { startTestServer } from '../../helpers/server.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import type { TestClient } from '../../helpers/http.js';
import { generatePgpKey, generatePgpKeys } from '../../helpers/pgp.js';
import type { RunningServer } from '../../../core/server.js';
import { AlreadyInitializedError } from '../../../core/errors.js';

describe('sys/init with PGP keys', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(() => server.close());

  it('encrypts each share and the root token to their keys; the decrypted values unseal and authenticate', async () => {
    const pgp = await generatePgpKeys(4);
    const init = await server.client.put('sys/init', {
      secret_shares: 3,
      secret_threshold: 2,
      pgp_keys: pgp.slice(0, 3).map((k) => k.publicKeyBase64),
      root_token_pgp_key: pgp[3]!.armoredPublicKey,
    });
    expect(init.status, init.text).to.equal(200);
    expect(init.body.keys_base64.map((k: string) => Buffer.from(k, 'base64').toString('hex'))).to.deep.equal(init.body.keys);
    expect(init.body.root_token).to.not.match(/^hvs\./);
    const shares = await Promise.all((init.body.keys_base64 as string[]).map((message, i) => pgp[i]!.decrypt(message)));
    expect((await server.client.put('sys/unseal', { key: shares[1] })).body.progress).to.equal(1);
    expect((await server.client.put('sys/unseal', { key: shares[2] })).body.sealed).to.equal(false);
    const rootToken = await pgp[3]!.decrypt(init.body.root_token);
    const self = await server.client.get('auth/token/lookup-self', { token: rootToken });
    expect(self.body.data.policies).to.deep.equal(['root']);
  });

  it('refuses bad keys before creating anything: the server stays uninitialized', async () => {
    const pgp = await generatePgpKeys(2);
    const cases: [Record<string, unknown>, string | RegExp][] = [
      [{ secret_shares: 3, secret_threshold: 2, pgp_keys: pgp.map((k) => k.publicKeyBase64) }, 'pgp_keys must hold one key per share: got 2 keys for 3 shares'],
      [{ secret_shares: 2, secret_threshold: 2, pgp_keys: ['keybase:alice', 'keybase:bob'] }, /^pgp_keys\[0\]: Keybase keys/],
      [{ secret_shares: 2, secret_threshold: 2, pgp_keys: [pgp[0]!.publicKeyBase64, pgp[1]!.privateKeyBase64] }, 'pgp_keys[1]: is a private key; pass only the public key'],
      [{ secret_shares: 1, secret_threshold: 1, root_token_pgp_key: 'not a key' }, /^root_token_pgp_key: not an OpenPGP public key/],
    ];
    for (const [body, message] of cases) {
      const res = await server.client.put('sys/init', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      if (typeof message === 'string') expect(res.body.errors[0]).to.equal(message);
      else expect(res.body.errors[0]).to.match(message);
    }
    expect((await server.client.get('sys/init')).body.initialized).to.equal(false);
  });

  it('on an initialized server answers "Vault is already initialized" without looking at the keys', async () => {
    expect((await server.client.put('sys/init', { secret_shares: 1, secret_threshold: 1 })).status).to.equal(200);
    for (const pgpKeys of [['not a key', 'keybase:bob'], ['not a key', 'nor this', 'nor that']]) {
      const res = await server.client.put('sys/init', { secret_shares: 2, secret_threshold: 2, pgp_keys: pgpKeys, root_token_pgp_key: 'junk' });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.equal(new AlreadyInitializedError().message);
    }
  });

  it('refuses a pgp_keys count other than secret_shares before parsing any key', async () => {
    const res = await server.client.put('sys/init', { secret_shares: 3, secret_threshold: 2, pgp_keys: ['not a key', 'nor this'] });
    expect(res.status).to.equal(400);
    expect(res.body.errors[0]).to.equal('pgp_keys must hold one key per share: got 2 keys for 3 shares');
    expect((await server.client.get('sys/init')).body.initialized).to.equal(false);
  });

  it('reads many keys one at a time: the event loop turns while they are parsed and the shares encrypted', async () => {
    const pgp = await generatePgpKey('operator', 'rsa');
    const shares = 16;
    const { result, turns } = await turnsDuring(() =>
      server.client.put('sys/init', { secret_shares: shares, secret_threshold: 2, pgp_keys: Array.from({ length: shares }, () => pgp.publicKeyBase64) }),
    );
    expect(result.status, result.text).to.equal(200);
    expect(await pgp.decrypt(result.body.keys_base64[shares - 1])).to.match(/^[0-9a-f]{66}$/);
    // One turn at least before each key is parsed and before each share is encrypted.
    expect(turns).to.be.at.least(2 * shares);
  });
});