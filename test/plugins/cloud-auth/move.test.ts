/** Moving the cloud auth method (`sys/remount`): its roles, config and the tokens it minted keep working at the new path. */
import { expect } from 'chai';
import { startCloudHarness, MAIN_ACCOUNT, type CloudHarness } from './harness.js';
import { TestClient } from '../../helpers/http.js';
import { signedLogin } from '../../fixtures/cloud/sign.js';
import { signing, type AccessKey, type User } from '../../fixtures/cloud/world.js';

describe('cloud auth moved to another path', () => {
  let h: CloudHarness;
  let user: User;
  let key: AccessKey;

  before(async () => {
    h = await startCloudHarness();
    await h.configure();
    user = h.world.addUser(MAIN_ACCOUNT, 'mover');
    key = h.world.keyFor(user);
  });
  after(() => h.close());

  it('keeps iam tokens minted before the move valid and renewable, and logs in at the new path only', async () => {
    await h.writeRole('mover', { bound_iam_principal_arn: user.arn, token_ttl: '10m', token_max_ttl: '1h', token_policies: 'default' });
    const login = await h.login(key);
    expect(login.status, login.text).to.equal(200);
    const workload = new TestClient(h.server.address, login.body.auth.client_token as string);

    const moved = await h.root.post('sys/remount', { from: 'auth/cloud', to: 'auth/workloads/cloud' });
    expect(moved.status, moved.text).to.equal(200);

    const self = await workload.get('auth/token/lookup-self');
    expect(self.status, self.text).to.equal(200);
    expect(self.body.data.path).to.equal('auth/workloads/cloud/login');
    expect(self.body.data.meta).to.deep.equal(login.body.auth.metadata);

    // Renewal goes through the moved method, which checks the role it kept; the role's TTL applies.
    await h.root.post('auth/workloads/cloud/role/mover', { token_ttl: '20m' });
    const renewed = await workload.post('auth/token/renew-self', {});
    expect(renewed.status, renewed.text).to.equal(200);
    expect(renewed.body.auth.lease_duration).to.equal(1200);

    const body = await signedLogin({ credentials: signing(key) });
    expect((await h.anon.post('auth/cloud/login', body)).status).to.equal(404);
    const again = await h.anon.post('auth/workloads/cloud/login', body);
    expect(again.status, again.text).to.equal(200);
    expect(again.body.auth.entity_id, 'the alias is kept by accessor, so the entity is the same').to.equal(login.body.auth.entity_id);
    expect((await h.root.get('auth/workloads/cloud/config/client')).body.data.endpoint).to.equal(h.fake.url);

    // The renewal still asks the role: deleting it at the new path stops renewals.
    await h.root.delete('auth/workloads/cloud/role/mover');
    const refused = await workload.post('auth/token/renew-self', {});
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0]).to.equal('failed to renew entry: role entry not found');
  });
});
