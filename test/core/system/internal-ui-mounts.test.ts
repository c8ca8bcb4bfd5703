/**
 * sys/internal/ui/mounts lists, without a token, only the mounts tuned listing_visibility="unauth"
 * (type, description and options, as Vault's), and with a token what that token may use.
 * sys/internal/ui/mounts/:path checks its token where every path does (the authenticate stage):
 * a token bound to other client addresses is refused, and a call spends a use of a limited-use
 * token. Any token that may use something in the mount is answered, whatever its policies say of
 * the sys path itself.
 */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient, createToken } from '../../helpers/http.js';

/** Two loopback addresses a test connects from (any 127.x.y.z is local on Linux). */
const NEAR = '127.0.0.2';
const FAR = '127.0.0.3';

describe('sys/internal/ui/mounts', function () {
  this.timeout(20_000);
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;
  let root: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    root = server.client;
    expect((await root.post('sys/mounts/kv', { type: 'kv', options: { version: '2' } })).status).to.equal(204);
    expect((await root.put('sys/policies/acl/kv-reader', { policy: 'path "kv/data/*" { capabilities = ["read"] }' })).status).to.equal(204);
    expect((await root.post('auth/token/roles/near', { allowed_policies: ['kv-reader'], token_bound_cidrs: [`${NEAR}/32`] })).status).to.equal(204);
  });
  after(() => server.close());

  const describeMount = (token: string, localAddress?: string) =>
    new TestClient(server.address, token).get('sys/internal/ui/mounts/kv/app', localAddress ? { localAddress } : {});

  it('answers a token that may use the mount, though no policy names the sys path', async () => {
    const reader = await createToken(root, { policies: ['kv-reader'] });
    const answer = await describeMount(reader);
    expect(answer.status, answer.text).to.equal(200);
    expect(answer.body.data).to.include({ type: 'kv', path: 'kv/' });
  });

  it('refuses a request without a token', async () => {
    expect((await new TestClient(server.address).get('sys/internal/ui/mounts/kv/app')).status).to.equal(403);
  });

  it('refuses a CIDR-bound token from another address, as every other path does', async () => {
    const created = await root.post('auth/token/create/near', { policies: ['kv-reader'] });
    expect(created.status, created.text).to.equal(200);
    const bound = created.body.auth.client_token as string;
    expect((await describeMount(bound, NEAR)).status).to.equal(200);
    const far = await describeMount(bound, FAR);
    expect(far.status, far.text).to.equal(403);
    expect((await new TestClient(server.address, bound).get('kv/data/app', { localAddress: FAR })).status).to.equal(403);
  });

  it('spends a use of a limited-use token: a token with one use is spent by a call there', async () => {
    const once = await createToken(root, { policies: ['kv-reader'], num_uses: 1 });
    expect((await describeMount(once)).status).to.equal(200);
    expect((await new TestClient(server.address, once).get('auth/token/lookup-self')).status).to.equal(403);
    expect((await describeMount(once)).status).to.equal(403);
  });

  describe('the list (sys/internal/ui/mounts)', () => {
    before(async () => {
      expect((await root.post('sys/auth/people', { type: 'userpass', description: 'Staff accounts', config: { listing_visibility: 'unauth' } })).status).to.equal(204);
      expect((await root.post('sys/auth/hidden', { type: 'userpass', config: { listing_visibility: 'hidden' } })).status).to.equal(204);
      expect((await root.post('sys/auth/plain', { type: 'userpass' })).status).to.equal(204);
      expect((await root.post('sys/mounts/shared', { type: 'kv', options: { version: '1' } })).status).to.equal(204);
      expect((await root.post('sys/mounts/shared/tune', { listing_visibility: 'unauth' })).status).to.equal(204);
      expect((await root.post('sys/mounts/private', { type: 'kv' })).status).to.equal(204);
    });

    it('answers without a token: only the mounts tuned listing_visibility="unauth", with their type, description and options', async () => {
      const answer = await new TestClient(server.address).get('sys/internal/ui/mounts');
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.body.data).to.deep.equal({
        auth: { 'people/': { type: 'userpass', description: 'Staff accounts', options: null } },
        secret: { 'shared/': { type: 'kv', description: '', options: { version: '1' } } },
      });
    });

    it('answers a token that is not usable as it answers no token', async () => {
      const answer = await new TestClient(server.address, 'hvs.not-a-token').get('sys/internal/ui/mounts');
      expect(answer.status, answer.text).to.equal(200);
      expect(Object.keys(answer.body.data.auth)).to.deep.equal(['people/']);
    });

    it('answers a token with the mounts it may use, described in full, and the unauth ones', async () => {
      const reader = await createToken(root, { policies: ['kv-reader'] });
      const answer = await new TestClient(server.address, reader).get('sys/internal/ui/mounts');
      expect(answer.status, answer.text).to.equal(200);
      // cubbyhole/, sys/ and token/: the default policy grants paths in each.
      expect(Object.keys(answer.body.data.secret).sort()).to.deep.equal(['cubbyhole/', 'kv/', 'shared/', 'sys/']);
      expect(Object.keys(answer.body.data.auth).sort()).to.deep.equal(['people/', 'token/']);
      expect(answer.body.data.secret['kv/']).to.include({ type: 'kv' }).and.to.have.property('accessor').that.matches(/^kv_/);
    });

    it('answers the root token with every mount', async () => {
      const answer = await root.get('sys/internal/ui/mounts');
      expect(Object.keys(answer.body.data.auth).sort()).to.deep.equal(['hidden/', 'people/', 'plain/', 'token/']);
      expect(answer.body.data.auth['people/'].config).to.include({ listing_visibility: 'unauth' });
    });
  });
});
