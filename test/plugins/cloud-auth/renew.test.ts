/** Renewal of iam and ec2 tokens (https://developer.hashicorp.com/vault/docs/auth/aws): what it re-checks and what it takes from the role as it is now. */
import { expect } from 'chai';
import { startCloudHarness, MAIN_ACCOUNT, type CloudHarness } from './harness.js';
import { TestClient, type TestResponse } from '../../helpers/http.js';
import type { AccessKey, Instance, Role, User } from '../../fixtures/cloud/world.js';

describe('cloud auth renewal', () => {
  let h: CloudHarness;
  let user: User;
  let userKey: AccessKey;
  const region = 'us-east-1';

  const renew = (login: TestResponse) => new TestClient(h.server.address, login.body.auth.client_token).post('auth/token/renew-self', {});
  const expectRefused = (res: TestResponse, message: string | RegExp) => {
    expect(res.status, res.text).to.equal(400);
    if (typeof message === 'string') expect(res.body.errors[0]).to.equal(message);
    else expect(res.body.errors[0]).to.match(message);
  };

  before(async () => {
    h = await startCloudHarness();
    await h.configure();
    user = h.world.addUser(MAIN_ACCOUNT, 'renewer');
    userKey = h.world.keyFor(user);
  });
  after(() => h.close());

  it('renews while the role exists and binds the principal, with the role\'s current TTL', async () => {
    await h.writeRole('renewer', { bound_iam_principal_arn: user.arn, token_ttl: '10m' });
    const login = await h.login(userKey);
    expect(login.body.auth.lease_duration).to.equal(600);
    await h.writeRole('renewer', { token_ttl: '20m' });
    const renewed = await renew(login);
    expect(renewed.status, renewed.text).to.equal(200);
    expect(renewed.body.auth.lease_duration).to.equal(1200);
  });

  it('keeps renewing when the operator removes auth_type from the visible metadata', async () => {
    await h.writeRole('renewer', { bound_iam_principal_arn: user.arn });
    await h.root.post('auth/cloud/config/identity', { iam_metadata: [] });
    try {
      const login = await h.login(userKey);
      expect(login.body.auth.metadata).not.to.have.property('auth_type');
      expect((await renew(login)).status).to.equal(200);
    } finally {
      await h.root.post('auth/cloud/config/identity', { iam_metadata: 'default' });
    }
  });

  it('refuses once the role is deleted', async () => {
    await h.writeRole('short-lived', { bound_iam_principal_arn: user.arn });
    const login = await h.login(userKey, { role: 'short-lived' });
    await h.root.delete('auth/cloud/role/short-lived');
    expectRefused(await renew(login), 'failed to renew entry: role entry not found');
  });

  it('refuses once the role no longer binds the principal', async () => {
    await h.writeRole('rebound', { bound_iam_principal_arn: user.arn });
    const login = await h.login(userKey, { role: 'rebound' });
    const other = h.world.addUser(MAIN_ACCOUNT, 'someone-else');
    await h.writeRole('rebound', { bound_iam_principal_arn: other.arn });
    expectRefused(await renew(login), `failed to renew entry: role "rebound" no longer bound to ARN "${user.arn}"`);
  });

  it('refuses a principal recreated under the same name once the role is written again', async () => {
    const temp = h.world.addUser(MAIN_ACCOUNT, 'temp');
    await h.writeRole('temp', { bound_iam_principal_arn: temp.arn });
    const login = await h.login(h.world.keyFor(temp));
    h.world.recreateUser(temp);
    await h.writeRole('temp', { bound_iam_principal_arn: temp.arn });
    expectRefused(await renew(login), `failed to renew entry: role "temp" no longer bound to ARN "${temp.arn}"`);
  });

  it('re-checks a wildcard binding against the full ARN of the principal', async () => {
    const pathed = h.world.addUser(MAIN_ACCOUNT, 'pathed', { path: '/ops/' });
    await h.writeRole('ops', { bound_iam_principal_arn: `arn:aws:iam::${MAIN_ACCOUNT}:user/ops/*` });
    const login = await h.login(h.world.keyFor(pathed), { role: 'ops' });
    expect(login.status, login.text).to.equal(200);
    expect((await renew(login)).status).to.equal(200);
    await h.writeRole('ops', { bound_iam_principal_arn: `arn:aws:iam::${MAIN_ACCOUNT}:user/dev/*` });
    expectRefused(await renew(login), `failed to renew entry: role "ops" no longer bound to ARN "arn:aws:iam::${MAIN_ACCOUNT}:user/pathed"`);
  });

  describe('with an inferred instance', () => {
    let role: Role;
    let instance: Instance;
    let instanceKey: AccessKey;
    before(() => {
      role = h.world.addRole(MAIN_ACCOUNT, 'svc');
      h.world.addInstanceProfile(MAIN_ACCOUNT, 'svc-profile', ['svc']);
    });
    beforeEach(() => {
      instance = h.world.addInstance({ accountId: MAIN_ACCOUNT, region, profileName: 'svc-profile' });
      instanceKey = h.world.instanceCredentials(instance);
    });

    it('renews while the instance runs, and refuses once it stops', async () => {
      await h.writeRole('svc', { bound_iam_principal_arn: role.arn, inferred_entity_type: 'ec2_instance', inferred_cloud_region: region, bound_account_id: MAIN_ACCOUNT });
      const login = await h.login(instanceKey);
      expect(login.status, login.text).to.equal(200);
      expect((await renew(login)).status).to.equal(200);
      instance.state = 'stopped';
      expectRefused(await renew(login), `failed to renew entry: failed to verify instance ID "${instance.instanceId}": instance is not in 'running' state`);
    });

    it('refuses tokens issued before the role started inferring instances', async () => {
      await h.root.delete('auth/cloud/role/svc');
      await h.writeRole('svc', { bound_iam_principal_arn: role.arn });
      const login = await h.login(instanceKey);
      expect(login.status, login.text).to.equal(200);
      await h.writeRole('svc', { inferred_entity_type: 'ec2_instance', inferred_cloud_region: region });
      expectRefused(await renew(login), /^failed to renew entry: the token was issued before role "svc" inferred ec2_instance entities/);
      const fresh = await h.login(instanceKey);
      expect((await renew(fresh)).status).to.equal(200);
    });

    it('answers 502 when the provider cannot be reached to check the instance', async () => {
      await h.writeRole('svc', { bound_iam_principal_arn: role.arn, inferred_entity_type: 'ec2_instance', inferred_cloud_region: region });
      const login = await h.login(instanceKey);
      await h.configure({ endpoint: 'http://127.0.0.1:9' });
      try {
        const res = await renew(login);
        expect(res.status, res.text).to.equal(502);
        expect(res.body.errors[0]).to.match(/^failed to renew entry: failed to verify instance ID "i-[0-9a-f]+": DescribeInstances in us-east-1: the provider could not be reached/);
      } finally {
        await h.configure();
      }
    });
  });
  describe('ec2 tokens', () => {
    const AMI = 'ami-0ccccccccccccccc0';
    let instance: Instance;
    const loginEc2 = async () => {
      const res = await h.ec2Login(instance, { role: 'ec2-web' });
      expect(res.status, res.text).to.equal(200);
      return res;
    };
    const entry = async () => (await h.root.get(`auth/cloud/identity-accesslist/${instance.instanceId}`)).body.data;

    before(async () => {
      await h.registerTestCertificates();
    });
    beforeEach(async () => {
      await h.writeRole('ec2-web', { auth_type: 'ec2', bound_ami_id: AMI, token_ttl: '10m' });
      instance = h.world.addInstance({ accountId: MAIN_ACCOUNT, region, imageId: AMI });
    });

    it("renews while the instance runs, with the role's current TTL, and moves the access-list entry on", async () => {
      const login = await loginEc2();
      expect(login.body.auth.lease_duration).to.equal(600);
      const before = await entry();
      await h.writeRole('ec2-web', { token_ttl: '20m' });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const renewed = await renew(login);
      expect(renewed.status, renewed.text).to.equal(200);
      expect(renewed.body.auth.lease_duration).to.equal(1200);
      const after = await entry();
      expect(Date.parse(after.last_updated_time)).to.be.greaterThan(Date.parse(before.last_updated_time));
      expect(Date.parse(after.expiration_time)).to.be.greaterThan(Date.parse(before.expiration_time));
      expect(after.client_nonce).to.equal(before.client_nonce);
    });

    it('refuses once the instance stops', async () => {
      const login = await loginEc2();
      instance.state = 'stopped';
      expectRefused(await renew(login), `failed to renew entry: failed to verify instance ID "${instance.instanceId}": instance is not in 'running' state`);
    });

    it("refuses once the instance's access-list entry is deleted (or tidied)", async () => {
      const login = await loginEc2();
      await h.root.delete(`auth/cloud/identity-accesslist/${instance.instanceId}`);
      expectRefused(await renew(login), `failed to renew entry: failed to verify the access list identity entry for instance ID: "${instance.instanceId}"`);
    });

    it('refuses once the role of the entry is deleted', async () => {
      const login = await loginEc2();
      await h.root.delete('auth/cloud/role/ec2-web');
      expectRefused(await renew(login), 'failed to renew entry: role entry not found');
    });

    it('answers 502 when the provider cannot be reached to check the instance', async () => {
      const login = await loginEc2();
      await h.configure({ endpoint: 'http://127.0.0.1:9' });
      try {
        const res = await renew(login);
        expect(res.status, res.text).to.equal(502);
        expect(res.body.errors[0]).to.match(/^failed to renew entry: failed to verify instance ID "i-[0-9a-f]+": DescribeInstances in us-east-1: the provider could not be reached/);
      } finally {
        await h.configure();
      }
    });
  });
});
