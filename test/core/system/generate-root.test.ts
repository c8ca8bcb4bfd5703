/**
 * Root token generation over HTTP: Vault's unauthenticated sys/generate-root (OTP), OpenBao's
 * token-authenticated sys/generate-root-token (PGP), sys/decode-token, and what keeps callers
 * without the attempt's nonce out of it.
 */
import { expect } from 'chai';
import { pino } from 'pino';
import { initAndUnseal, ManualClock, startTestServer, testConfig } from '../../helpers/server.js';
import { createToken, TestClient } from '../../helpers/http.js';
import { generatePgpKey } from '../../helpers/pgp.js';
import { startServer, type RunningServer } from '../../../core/server.js';
import { parseConfig } from '../../../core/config/config.js';

type Server = RunningServer & { client: TestClient };

/** What `vault operator generate-root -decode` does: base64 (no padding) of token XOR OTP, reversed. */
function vaultCliDecode(encoded: string, otp: string): string {
  const bytes = Buffer.from(encoded, 'base64');
  return Buffer.from(bytes.map((b, i) => b ^ otp.charCodeAt(i))).toString('utf8');
}

describe('root token generation', function () {
  this.timeout(60_000);
  let server: Server;
  let keys: string[];
  let anonymous: TestClient;

  before(async () => {
    server = await startTestServer();
    ({ keys } = await initAndUnseal(server, 3, 2));
    anonymous = new TestClient(server.address);
  });
  afterEach(async () => {
    // Leave no attempt behind for the next test (the authenticated cancel needs no nonce).
    if (server.client.token) await server.client.delete('sys/generate-root-token/attempt');
  });
  after(() => server.close());

  it('after the root token is revoked, the shares mint a new one through sys/generate-root with an OTP', async () => {
    const oldRoot = server.client.token!;
    expect((await server.client.put('auth/token/revoke-self')).status).to.equal(204);
    expect((await server.client.get('auth/token/lookup-self')).status).to.equal(403);
    server.client.token = undefined;

    const start = await anonymous.put('sys/generate-root/attempt', {});
    expect(start.status).to.equal(200);
    expect(start.body).to.include({ started: true, progress: 0, required: 2, complete: false, otp_length: 28, pgp_fingerprint: '' });
    const otp = start.body.otp as string;
    const nonce = start.body.nonce as string;
    expect(otp).to.match(/^[A-Za-z0-9]{28}$/);
    expect(nonce).to.match(/^[0-9a-f-]{36}$/);

    const first = await anonymous.put('sys/generate-root/update', { key: keys[2], nonce });
    expect(first.body).to.include({ started: true, progress: 1, required: 2, complete: false, encoded_token: '' });
    const done = await anonymous.put('sys/generate-root/update', { key: keys[0], nonce });
    expect(done.status).to.equal(200);
    expect(done.body).to.include({ complete: true, progress: 2, required: 2, nonce });
    const encoded = done.body.encoded_token as string;
    expect(done.body.encoded_root_token).to.equal(encoded);
    expect(encoded).to.match(/^[A-Za-z0-9+/]+$/);

    const decoded = await anonymous.put('sys/decode-token', { encoded_token: encoded, otp });
    expect(decoded.status).to.equal(200);
    const token = decoded.body.data.token as string;
    expect(token).to.equal(vaultCliDecode(encoded, otp)).and.match(/^hvs\.[A-Za-z0-9]{24}$/);
    expect(token).to.not.equal(oldRoot);
    const self = await anonymous.get('auth/token/lookup-self', { token });
    expect(self.status).to.equal(200);
    expect(self.body.data).to.include({ display_name: 'root', orphan: true });
    expect(self.body.data.policies).to.deep.equal(['root']);
    expect((await anonymous.get('sys/generate-root/attempt')).body.started).to.equal(false);
    server.client.token = token;
  });

  it('encrypts the new token to a PGP key through the token-authenticated sys/generate-root-token', async () => {
    const pgp = await generatePgpKey();
    expect((await anonymous.put('sys/generate-root-token/attempt', { pgp_key: pgp.publicKeyBase64 })).status).to.equal(403);
    const start = await server.client.put('sys/generate-root-token/attempt', { pgp_key: pgp.publicKeyBase64 });
    expect(start.status).to.equal(200);
    expect(start.body.data).to.include({ started: true, progress: 0, required: 2, otp: '', otp_length: 28, pgp_fingerprint: pgp.fingerprint });
    const nonce = start.body.data.nonce as string;
    expect((await server.client.get('sys/generate-root-token/attempt')).body.data.nonce).to.equal(nonce);

    await server.client.put('sys/generate-root-token/update', { key: keys[1], nonce });
    const done = await server.client.put('sys/generate-root-token/update', { key: keys[2], nonce });
    expect(done.body.data).to.include({ started: true, complete: true, progress: 2, required: 2, nonce, pgp_fingerprint: pgp.fingerprint });
    const token = await pgp.decrypt(done.body.data.encoded_token);
    expect(token).to.match(/^hvs\./);
    const self = await anonymous.get('auth/token/lookup-self', { token });
    expect(self.body.data.policies).to.deep.equal(['root']);
  });

  it('takes an OTP of the caller, which must be otp_length characters, and never echoes it', async () => {
    const short = await anonymous.put('sys/generate-root/attempt', { otp: 'tooshort' });
    expect(short.status).to.equal(400);
    expect(short.body.errors[0]).to.equal("'otp' must be 28 characters long (otp_length), got 8");
    // hvac's integration tests start with this OTP.
    const otp = 'BMjzW3wAsEzINXCM05Wbas3u9zSl';
    const start = await anonymous.put('sys/generate-root/attempt', { otp });
    expect(start.body.otp).to.equal('');
    await anonymous.put('sys/generate-root/update', { key: keys[0], nonce: start.body.nonce });
    const done = await anonymous.put('sys/generate-root/update', { key: keys[1], nonce: start.body.nonce });
    expect(vaultCliDecode(done.body.encoded_token, otp)).to.match(/^hvs\.[A-Za-z0-9]{24}$/);
  });

  it('refuses an OTP of 28 NUL bytes (it would send the token in the clear) or of a few repeated characters, on both families', async () => {
    for (const otp of ['\0'.repeat(28), 'A'.repeat(28), 'abcabcabcabcabcabcabcabcabca']) {
      const unauthed = await anonymous.put('sys/generate-root/attempt', { otp });
      expect(unauthed.status, JSON.stringify(otp)).to.equal(400);
      expect(unauthed.body.errors[0]).to.match(/^'otp' is not random: it holds \d distinct characters, fewer than 10/);
      const authed = await server.client.put('sys/generate-root-token/attempt', { otp });
      expect(authed.status).to.equal(400);
      expect(authed.body.errors[0]).to.match(/^'otp' is not random/);
    }
    expect((await anonymous.get('sys/generate-root/attempt')).body.started).to.equal(false);
  });

  it('does not read a pgp_key while an attempt is under way', async () => {
    expect((await anonymous.put('sys/generate-root/attempt', {})).status).to.equal(200);
    const second = await anonymous.put('sys/generate-root/attempt', { pgp_key: 'not a key' });
    expect(second.status).to.equal(400);
    expect(second.body.errors[0]).to.equal('root generation already in progress');
  });

  it('refuses both otp and pgp_key, a second attempt, and a Keybase key', async () => {
    const pgp = await generatePgpKey();
    const both = await anonymous.put('sys/generate-root/attempt', { otp: 'A'.repeat(28), pgp_key: pgp.publicKeyBase64 });
    expect(both.body.errors[0]).to.equal('give either otp or pgp_key, not both');
    const keybase = await anonymous.put('sys/generate-root/attempt', { pgp_key: 'keybase:alice' });
    expect(keybase.status).to.equal(400);
    expect(keybase.body.errors[0]).to.match(/^pgp_key: Keybase keys/);
    expect((await anonymous.put('sys/generate-root/attempt', {})).status).to.equal(200);
    const second = await anonymous.put('sys/generate-root/attempt', {});
    expect(second.status).to.equal(400);
    expect(second.body.errors[0]).to.equal('root generation already in progress');
  });

  describe('without a token, nothing works without the attempt\'s nonce', () => {
    let nonce: string;
    beforeEach(async () => {
      nonce = (await anonymous.put('sys/generate-root/attempt', {})).body.nonce;
    });

    it('the status does not show the nonce', async () => {
      const status = await anonymous.get('sys/generate-root/attempt');
      expect(status.body).to.include({ started: true, nonce: '' });
      expect(status.text).to.not.contain(nonce);
    });

    it('cancelling without the nonce is refused and the attempt goes on (CVE-2026-5807)', async () => {
      const bare = await anonymous.delete('sys/generate-root/attempt');
      expect(bare.status).to.equal(400);
      expect(bare.body.errors[0]).to.match(/^'nonce' is required to cancel a root generation without a token/);
      const wrong = await anonymous.delete('sys/generate-root/attempt', { body: { nonce: '00000000-0000-0000-0000-000000000000' } });
      expect(wrong.status).to.equal(400);
      expect(wrong.body.errors[0]).to.equal('incorrect nonce supplied');
      expect(wrong.text).to.not.contain(nonce);
      expect((await anonymous.get('sys/generate-root/attempt')).body.started).to.equal(true);
    });

    it('cancelling with the nonce (query or body) ends the attempt', async () => {
      expect((await anonymous.delete(`sys/generate-root/attempt?nonce=${nonce}`)).status).to.equal(204);
      expect((await anonymous.get('sys/generate-root/attempt')).body.started).to.equal(false);
      nonce = (await anonymous.put('sys/generate-root/attempt', {})).body.nonce;
      expect((await anonymous.delete('sys/generate-root/attempt', { body: { nonce } })).status).to.equal(204);
    });

    it('a share with a wrong nonce is refused without counting, and the error does not reveal the nonce', async () => {
      const wrong = await anonymous.put('sys/generate-root/update', { key: keys[0], nonce: 'guess' });
      expect(wrong.status).to.equal(400);
      expect(wrong.text).to.not.contain(nonce);
      expect((await anonymous.get('sys/generate-root/attempt')).body.progress).to.equal(0);
    });

    it('a token whose policy grants sys/generate-root-token/attempt can cancel it without the nonce; others cannot', async () => {
      await server.client.put('sys/policy/root-recovery', { policy: 'path "sys/generate-root-token/*" { capabilities = ["read", "update", "delete"] }' });
      const operator = (await server.client.post('auth/token/create', { policies: ['root-recovery'] })).body.auth.client_token as string;
      const other = (await server.client.post('auth/token/create', { policies: ['default'] })).body.auth.client_token as string;
      expect((await anonymous.delete('sys/generate-root-token/attempt')).status).to.equal(403);
      expect((await anonymous.delete('sys/generate-root-token/attempt', { token: other })).status).to.equal(403);
      expect((await anonymous.get('sys/generate-root-token/attempt', { token: operator })).body.data.nonce).to.equal(nonce);
      expect((await anonymous.delete('sys/generate-root-token/attempt', { token: operator })).status).to.equal(204);
      expect((await anonymous.get('sys/generate-root/attempt')).body.started).to.equal(false);
    });

    it('a holder of a current unseal key share cancels it without the nonce; a share that is not one is refused', async () => {
      const unknown = await anonymous.delete('sys/generate-root/attempt', { body: { key: 'cd'.repeat(33) } });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.errors[0]).to.equal("'key' is not one of the current key shares");
      expect((await anonymous.get('sys/generate-root/attempt')).body.started).to.equal(true);
      const both = await anonymous.delete('sys/generate-root/attempt', { body: { key: keys[1], nonce } });
      expect(both.body.errors[0]).to.equal("give either 'nonce' or 'key' to cancel a root generation, not both");
      expect((await anonymous.delete('sys/generate-root/attempt', { body: { key: Buffer.from(keys[1]!, 'hex').toString('base64') } })).status).to.equal(204);
      expect((await anonymous.get('sys/generate-root/attempt')).body.started).to.equal(false);
      const restarted = await anonymous.put('sys/generate-root/attempt', {});
      expect(restarted.status).to.equal(200);
      expect(restarted.body.nonce).to.not.equal(nonce);
    });

    it("a token with sudo on sys/generate-root/attempt cancels it without the nonce, as hvac's tests do with the root token", async () => {
      expect((await anonymous.delete('sys/generate-root/attempt', { token: server.client.token! })).status).to.equal(204);
      expect((await anonymous.get('sys/generate-root/attempt')).body.started).to.equal(false);

      await server.client.put('sys/policy/cancel-sudo', { policy: 'path "sys/generate-root/attempt" { capabilities = ["delete", "sudo"] }' });
      await server.client.put('sys/policy/cancel-only', { policy: 'path "sys/generate-root/attempt" { capabilities = ["delete"] }' });
      const withSudo = await createToken(server.client, { policies: ['cancel-sudo'], num_uses: 1 });
      const withoutSudo = await createToken(server.client, { policies: ['cancel-only'] });
      await anonymous.put('sys/generate-root/attempt', {});
      const refused = await anonymous.delete('sys/generate-root/attempt', { token: withoutSudo });
      expect(refused.status).to.equal(400);
      expect(refused.body.errors[0]).to.match(/^'nonce' is required to cancel a root generation without a token/);
      expect((await anonymous.get('sys/generate-root/attempt')).body.started).to.equal(true);
      expect((await anonymous.delete('sys/generate-root/attempt', { token: withSudo })).status).to.equal(204);
      expect((await anonymous.get('sys/generate-root/attempt')).body.started).to.equal(false);
      // The cancel spent the token's one use.
      expect((await anonymous.get('auth/token/lookup-self', { token: withSudo })).status).to.equal(403);
    });

    it("refuses 'key' anywhere but in a cancel", async () => {
      const res = await anonymous.put('sys/generate-root/attempt', { key: keys[0] });
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.match(/^'key' is taken only to cancel the attempt/);
      expect((await anonymous.get(`sys/generate-root/attempt?key=${keys[0]}`)).status).to.equal(400);
    });
  });

  it('refuses an unknown share and a repeated one without counting them', async () => {
    const { nonce } = (await anonymous.put('sys/generate-root/attempt', {})).body;
    expect((await anonymous.put('sys/generate-root/update', { key: 'cd'.repeat(33), nonce })).body.errors[0]).to.equal(
      "'key' is not one of the current key shares",
    );
    await anonymous.put('sys/generate-root/update', { key: keys[0], nonce });
    const again = await anonymous.put('sys/generate-root/update', { key: keys[0], nonce });
    expect(again.body.errors[0]).to.match(/already been provided/);
    expect((await anonymous.get('sys/generate-root/attempt')).body.progress).to.equal(1);
  });

  it('sealing forgets the attempt', async () => {
    await anonymous.put('sys/generate-root/attempt', {});
    expect((await server.client.put('sys/seal')).status).to.equal(204);
    for (const key of keys.slice(0, 2)) await anonymous.put('sys/unseal', { key });
    expect((await anonymous.get('sys/generate-root/attempt')).body.started).to.equal(false);
  });

  it('sys/decode-token refuses an empty field and an OTP of the wrong length', async () => {
    expect((await anonymous.put('sys/decode-token', { encoded_token: 'ICA' })).body.errors[0]).to.equal("provided 'encoded_token' or 'otp' is empty");
    const mismatch = await anonymous.put('sys/decode-token', { encoded_token: 'ICA', otp: 'ABC' });
    expect(mismatch.status).to.equal(400);
    expect(mismatch.body.errors[0]).to.match(/same length/);
  });
});

describe('root token generation attempts expire', function () {
  this.timeout(60_000);
  const clock = new ManualClock();
  let server: Server;
  let keys: string[];
  let anonymous: TestClient;

  before(async () => {
    server = await startTestServer({ clock });
    ({ keys } = await initAndUnseal(server, 3, 2));
    anonymous = new TestClient(server.address);
  });
  after(() => server.close());

  it('an hour after it started or last took a share: the status shows none, and a new one starts', async () => {
    const squatted = await anonymous.put('sys/generate-root/attempt', {});
    clock.advance(59 * 60);
    expect((await anonymous.put('sys/generate-root/update', { key: keys[0], nonce: squatted.body.nonce })).body.progress).to.equal(1);
    clock.advance(59 * 60);
    expect((await anonymous.get('sys/generate-root/attempt')).body).to.include({ started: true, progress: 1 });
    expect((await anonymous.put('sys/generate-root/attempt', {})).body.errors[0]).to.equal('root generation already in progress');

    clock.advance(60);
    expect((await anonymous.get('sys/generate-root/attempt')).body).to.include({ started: false, progress: 0 });
    expect((await server.client.get('sys/generate-root-token/attempt')).body.data.started).to.equal(false);
    const late = await anonymous.put('sys/generate-root/update', { key: keys[1], nonce: squatted.body.nonce });
    expect(late.status).to.equal(400);
    expect(late.body.errors[0]).to.equal('no root generation in progress');

    const fresh = await anonymous.put('sys/generate-root/attempt', {});
    expect(fresh.status).to.equal(200);
    await anonymous.put('sys/generate-root/update', { key: keys[1], nonce: fresh.body.nonce });
    const done = await anonymous.put('sys/generate-root/update', { key: keys[2], nonce: fresh.body.nonce });
    expect(done.body.complete).to.equal(true);
    expect(vaultCliDecode(done.body.encoded_token, fresh.body.otp)).to.match(/^hvs\./);
  });
});

describe('disable_unauthed_generate_root_endpoints', function () {
  this.timeout(60_000);
  let server: Server;
  let keys: string[];

  before(async () => {
    const parsed = parseConfig({ listener: { tcp: { address: '127.0.0.1:0', tls_disable: true, disable_unauthed_generate_root_endpoints: true } }, storage: { inmem: {} } }, '/');
    expect(parsed.disableUnauthedGenerateRoot).to.equal(true);
    const config = { ...testConfig(), disableUnauthedGenerateRoot: true };
    const running = await startServer({ config, logger: pino({ level: 'silent' }) });
    server = Object.assign(running, { client: new TestClient(running.address) });
    ({ keys } = await initAndUnseal(server, 1, 1));
  });
  after(() => server.close());

  it("turns Vault's unauthenticated family off with a 404 naming the option", async () => {
    const anonymous = new TestClient(server.address);
    for (const [method, path] of [['GET', 'sys/generate-root/attempt'], ['PUT', 'sys/generate-root/attempt'], ['DELETE', 'sys/generate-root/attempt'], ['PUT', 'sys/generate-root/update']] as const) {
      const res = await anonymous.send(method, path, method === 'PUT' ? { body: {} } : {});
      expect(res.status, `${method} ${path}`).to.equal(404);
      expect(res.body.errors[0]).to.match(/disable_unauthed_generate_root_endpoints/);
    }
  });

  it('leaves the token-authenticated family working', async () => {
    const start = await server.client.put('sys/generate-root-token/attempt', {});
    const done = await server.client.put('sys/generate-root-token/update', { key: keys[0], nonce: start.body.data.nonce });
    expect(done.body.data.complete).to.equal(true);
    const token = vaultCliDecode(done.body.data.encoded_token, start.body.data.otp);
    expect((await server.client.get('auth/token/lookup-self', { token })).body.data.policies).to.deep.equal(['root']);
  });

  it('defaults to off (the unauthenticated family served) when the option is not set', () => {
    const parsed = parseConfig({ listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } }, storage: { inmem: {} } }, '/');
    expect(parsed.disableUnauthedGenerateRoot).to.equal(undefined);
  });
});
