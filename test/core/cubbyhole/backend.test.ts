/** The per-token cubbyhole: private to its token, mounted by default, and destroyed with the token. */
import { expect } from 'chai';
import { ManualClock, startUnsealedServer } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';

describe('cubbyhole', function () {
  this.timeout(20_000);
  const clock = new ManualClock();
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;
  const newToken = async (body: Record<string, unknown> = {}) =>
    new TestClient(server.address, (await server.client.post('auth/token/create', { policies: ['default'], ...body })).body.auth.client_token as string);
  /** Every key in the cubbyhole mount's storage: one folder per token that has a cubbyhole. */
  const stored = () => server.host.mounts!.live('secret', 'cubbyhole/').storage.list('');

  before(async () => {
    server = await startUnsealedServer({ clock });
  });
  after(() => server.close());

  it('is mounted by default as type cubbyhole, and cannot be disabled', async () => {
    const mounts = await server.client.get('sys/mounts');
    expect(mounts.body.data['cubbyhole/']).to.include({ type: 'cubbyhole' });
    expect((await server.client.delete('sys/mounts/cubbyhole')).status).to.equal(400);
  });

  it('writes, reads, lists and deletes secrets of the calling token', async () => {
    const alice = await newToken();
    expect((await alice.post('cubbyhole/app/db', { user: 'u', password: 'p' })).status).to.equal(204);
    expect((await alice.post('cubbyhole/top', { v: 1 })).status).to.equal(204);
    expect((await alice.get('cubbyhole/app/db')).body.data).to.deep.equal({ user: 'u', password: 'p' });
    expect((await alice.list('cubbyhole/')).body.data.keys).to.deep.equal(['app/', 'top']);
    expect((await alice.list('cubbyhole/app')).body.data.keys).to.deep.equal(['db']);
    expect((await alice.post('cubbyhole/app/db', { user: 'v' })).status).to.equal(204);
    expect((await alice.get('cubbyhole/app/db')).body.data).to.deep.equal({ user: 'v' });
    expect((await alice.delete('cubbyhole/app/db')).status).to.equal(204);
    expect((await alice.get('cubbyhole/app/db')).status).to.equal(404);
  });

  it('shows a token only its own cubbyhole', async () => {
    const alice = await newToken();
    const bob = await newToken();
    await alice.post('cubbyhole/shared-name', { secret: 'alice only' });
    expect((await bob.get('cubbyhole/shared-name')).status).to.equal(404);
    expect((await bob.list('cubbyhole/')).status).to.equal(404);
    await bob.post('cubbyhole/shared-name', { secret: 'bob only' });
    expect((await alice.get('cubbyhole/shared-name')).body.data).to.deep.equal({ secret: 'alice only' });
  });

  it('refuses an empty write and batch tokens', async () => {
    const alice = await newToken();
    expect((await alice.post('cubbyhole/empty', {})).status).to.equal(400);
    const batch = await newToken({ type: 'batch', no_parent: true });
    const res = await batch.post('cubbyhole/x', { a: 1 });
    expect(res.status).to.equal(400);
    expect(res.body.errors[0]).to.contain("only supported by 'service' type tokens");
  });

  it('is destroyed when its token is revoked', async () => {
    const alice = await newToken();
    await alice.post('cubbyhole/doomed', { a: 1 });
    const before = await stored();
    expect((await alice.post('auth/token/revoke-self', {})).status).to.equal(204);
    const after = await stored();
    expect(after.length).to.equal(before.length - 1);
  });

  it('is destroyed when its token expires', async () => {
    const short = await newToken({ ttl: '1m' });
    await short.post('cubbyhole/brief', { a: 1 });
    const before = await stored();
    clock.advance(120);
    await server.host.runPeriodic();
    expect((await stored()).length).to.equal(before.length - 1);
  });
});
