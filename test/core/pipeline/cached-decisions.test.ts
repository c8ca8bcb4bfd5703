/**
 * The authenticate and authorize stages answer from cache when they can (a token used a moment
 * ago, an ACL built before for its policies). Whatever changed since — the token revoked, expired
 * or used up, its policies rewritten or deleted, its entity's aliases — the next request sees it.
 */
import { expect } from 'chai';
import { ManualClock, startUnsealedServer } from '../../helpers/server.js';
import { TestClient, createToken } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import notesPlugin from '../../fixtures/plugins/notes.js';

describe('cached token and ACL decisions', function () {
  this.timeout(20_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let root: TestClient;
  const clock = new ManualClock();

  const tokenWith = (body: Record<string, unknown>): Promise<string> => createToken(root, body);
  const as = (token: string) => new TestClient(server.address, token);
  const reader = (path: string) => `path "${path}" { capabilities = ["read"] }`;

  before(async () => {
    server = await startUnsealedServer({ plugins: [notesPlugin], clock });
    root = server.client;
    await root.post('sys/mounts/notes', { type: 'notes' });
    await root.post('notes/notes/a', { text: 'a' });
    await root.post('notes/notes/b', { text: 'b' });
  });
  after(() => server.close());

  it('refuses a token revoked after it was used', async () => {
    const client = as(await tokenWith({ policies: ['default'] }));
    expect((await client.get('auth/token/lookup-self')).status).to.equal(200);
    expect((await client.post('auth/token/revoke-self')).status).to.equal(204);
    expect((await client.get('auth/token/lookup-self')).status).to.equal(403);
  });

  it('refuses a token that expired after it was used', async () => {
    const client = as(await tokenWith({ policies: ['default'], ttl: '60s' }));
    expect((await client.get('auth/token/lookup-self')).status).to.equal(200);
    clock.advance(61);
    expect((await client.get('auth/token/lookup-self')).status).to.equal(403);
  });

  it('counts every use of a limited-use token, however often it is sent', async () => {
    await root.put('sys/policies/acl/read-a', { policy: reader('notes/notes/a') });
    const client = as(await tokenWith({ policies: ['read-a'], num_uses: 3 }));
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await client.get('notes/notes/a')).status);
    expect(statuses).to.deep.equal([200, 200, 200, 403]);
  });

  it('applies a rewritten policy to the next request of a token that already used the old one', async () => {
    await root.put('sys/policies/acl/moving', { policy: reader('notes/notes/a') });
    const client = as(await tokenWith({ policies: ['moving'] }));
    expect((await client.get('notes/notes/a')).status).to.equal(200);
    expect((await client.get('notes/notes/b')).status).to.equal(403);

    await root.put('sys/policies/acl/moving', { policy: reader('notes/notes/b') });
    expect((await client.get('notes/notes/a')).status).to.equal(403);
    expect((await client.get('notes/notes/b')).status).to.equal(200);

    await root.delete('sys/policies/acl/moving');
    expect((await client.get('notes/notes/b')).status).to.equal(403);
  });

  it('refuses a token another caller revoked through its accessor after it was used', async () => {
    const token = await tokenWith({ policies: ['default'] });
    const client = as(token);
    expect((await client.get('auth/token/lookup-self')).status).to.equal(200);
    const accessor = (await root.post('auth/token/lookup', { token })).body.data.accessor as string;
    expect((await root.post('auth/token/revoke-accessor', { accessor })).status).to.equal(204);
    expect((await client.get('auth/token/lookup-self')).status).to.equal(403);
  });
});
