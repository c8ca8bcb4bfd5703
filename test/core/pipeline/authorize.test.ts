/** Authorization comes before field validation: a caller without access gets 403, never a 400 about a field. */
import { expect } from 'chai';
import { startUnsealedServer } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';

describe('authorization stage', function () {
  this.timeout(20_000);
  let server: Awaited<ReturnType<typeof startUnsealedServer>>;
  let outsider: TestClient;
  let keyAdmin: TestClient;

  before(async () => {
    server = await startUnsealedServer();
    await server.client.post('sys/mounts/transit', { type: 'transit' });
    await server.client.put('sys/policies/acl/key-admin', { policy: 'path "transit/keys/*" { capabilities = ["create", "update", "read"] }' });
    const token = async (policies: string[]) => (await server.client.post('auth/token/create', { policies })).body.auth.client_token as string;
    outsider = new TestClient(server.address, await token(['default']));
    keyAdmin = new TestClient(server.address, await token(['key-admin']));
  });
  after(() => server.close());

  it('answers 403 to a caller without access whose input is also invalid', async () => {
    const res = await outsider.post('transit/keys/k', { type: 'not-a-type', exportable: 'maybe' });
    expect(res.status).to.equal(403);
    expect(res.body.errors).to.deep.equal(['permission denied']);
  });

  it('answers 403 to a caller without access who leaves out a required field', async () => {
    expect((await outsider.post('sys/audit-hash/file', {})).status).to.equal(403);
  });

  it('answers the field error to a caller who has access', async () => {
    const res = await keyAdmin.post('transit/keys/k', { exportable: 'maybe' });
    expect(res.status).to.equal(400);
    expect(res.body.errors[0]).to.contain('exportable');
  });
});
