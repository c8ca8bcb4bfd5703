/** Roles of the cloud auth method: fields, defaults and the write rules (docs/cloud-auth.md, "Roles"), over HTTP. */
import { expect } from 'chai';
import { startCloudHarness, MAIN_ACCOUNT, type CloudHarness } from './harness.js';

describe('cloud auth roles', () => {
  let h: CloudHarness;
  const error = async (name: string, body: Record<string, unknown>): Promise<string> => {
    const res = await h.writeRole(name, body);
    expect(res.status, res.text).to.equal(400);
    return res.body.errors[0] as string;
  };

  before(async () => {
    h = await startCloudHarness();
    await h.configure();
  });
  after(() => h.close());

  it('creates an iam role by default, lower-cases its name, and reads every field back', async () => {
    const user = h.world.addUser(MAIN_ACCOUNT, 'dev');
    expect((await h.writeRole('Dev-Role', { bound_iam_principal_arn: user.arn, policies: 'B,a,a', token_ttl: '1h' })).status).to.equal(204);
    const read = await h.root.get('auth/cloud/role/DEV-ROLE');
    expect(read.status).to.equal(200);
    const data = read.body.data;
    expect(data.role_id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(data).to.deep.include({
      auth_type: 'iam',
      bound_iam_principal_arn: [user.arn],
      bound_iam_principal_id: [user.userId],
      bound_ami_id: [],
      bound_ec2_instance_id: null,
      resolve_cloud_unique_ids: true,
      inferred_entity_type: '',
      inferred_cloud_region: '',
      role_tag: '',
      token_policies: ['a', 'b'],
      policies: ['a', 'b'],
      token_ttl: 3600,
      token_max_ttl: 0,
      token_type: 'default',
      token_bound_cidrs: [],
      token_num_uses: 0,
      allow_instance_migration: false,
      disallow_reauthentication: false,
    });
    expect(data).not.to.have.property('hmac_key');
    expect((await h.root.list('auth/cloud/roles')).body.data.keys).to.deep.equal(['dev-role']);
    expect((await h.root.list('auth/cloud/role')).body.data.keys).to.deep.equal(['dev-role']);
  });

  it('keeps the role_id across updates, updates only what is sent, and deletes', async () => {
    const user = h.world.addUser(MAIN_ACCOUNT, 'keep');
    await h.writeRole('keep', { bound_iam_principal_arn: user.arn, token_policies: ['x'] });
    const id = (await h.root.get('auth/cloud/role/keep')).body.data.role_id;
    expect((await h.writeRole('keep', { token_max_ttl: '2h' })).status).to.equal(204);
    const data = (await h.root.get('auth/cloud/role/keep')).body.data;
    expect(data).to.deep.include({ role_id: id, token_policies: ['x'], token_max_ttl: 7200, bound_iam_principal_arn: [user.arn] });
    expect(data).not.to.have.property('policies');
    expect((await h.root.delete('auth/cloud/role/keep')).status).to.equal(204);
    expect((await h.root.get('auth/cloud/role/keep')).status).to.equal(404);
  });

  it('takes lists as comma strings or arrays, and "" clears a list', async () => {
    await h.writeRole('lists', { auth_type: 'ec2', bound_ami_id: 'ami-1, ami-2', bound_vpc_id: ['vpc-1', 'vpc-2'], bound_region: 'us-east-1' });
    let data = (await h.root.get('auth/cloud/role/lists')).body.data;
    expect(data.bound_ami_id).to.deep.equal(['ami-1', 'ami-2']);
    expect(data.bound_vpc_id).to.deep.equal(['vpc-1', 'vpc-2']);
    await h.writeRole('lists', { bound_ami_id: '' });
    data = (await h.root.get('auth/cloud/role/lists')).body.data;
    expect(data.bound_ami_id).to.deep.equal([]);
    expect(await error('lists', { bound_vpc_id: [], bound_region: [] })).to.equal('at least one bound parameter should be specified on the role');
  });

  it('requires at least one constraint', async () => {
    expect(await error('empty', {})).to.equal('at least one bound parameter should be specified on the role');
    expect(await error('empty', { auth_type: 'ec2' })).to.equal('at least one bound parameter should be specified on the role');
  });

  it('refuses constraints that the auth type does not check', async () => {
    const instanceBinds = ['bound_ami_id', 'bound_account_id', 'bound_region', 'bound_vpc_id', 'bound_subnet_id', 'bound_iam_role_arn', 'bound_iam_instance_profile_arn', 'bound_ec2_instance_id'];
    for (const field of instanceBinds) {
      expect(await error('wrong-binds', { [field]: 'x' })).to.equal(`specified ${field} but not specifying ec2 auth_type or inferring ec2_instance`);
    }
    expect(await error('wrong-binds', { auth_type: 'ec2', bound_iam_principal_arn: 'arn:aws:iam::1:user/x' })).to.equal(
      'specified bound_iam_principal_arn but not specifying iam auth_type',
    );
  });

  it('accepts instance constraints, bound_region included, on an iam role that infers instances', async () => {
    const res = await h.writeRole('inferring', {
      inferred_entity_type: 'ec2_instance',
      inferred_cloud_region: 'us-east-1',
      bound_region: 'us-east-1',
      bound_vpc_id: 'vpc-1',
    });
    expect(res.status, res.text).to.equal(204);
    expect((await h.root.get('auth/cloud/role/inferring')).body.data).to.deep.include({ inferred_entity_type: 'ec2_instance', inferred_cloud_region: 'us-east-1' });
  });

  it('checks the inference settings', async () => {
    expect(await error('infer', { auth_type: 'ec2', inferred_entity_type: 'ec2_instance', bound_ami_id: 'a' })).to.equal(
      "specified inferred_entity_type but didn't allow iam auth_type",
    );
    expect(await error('infer', { inferred_entity_type: 'lambda', bound_ami_id: 'a' })).to.equal('specified invalid inferred_entity_type: lambda');
    expect(await error('infer', { inferred_entity_type: 'ec2_instance', bound_ami_id: 'a' })).to.equal('specified inferred_entity_type but not inferred_cloud_region');
    expect(await error('infer', { inferred_cloud_region: 'us-east-1', bound_iam_principal_arn: 'arn:aws:iam::1:user/*' })).to.equal(
      'specified inferred_cloud_region but not inferred_entity_type',
    );
  });

  it('takes inferred_aws_region and resolve_aws_unique_ids, the names Vault clients send', async () => {
    const res = await h.writeRole('vault-names', {
      inferred_entity_type: 'ec2_instance',
      inferred_aws_region: 'us-west-2',
      resolve_aws_unique_ids: false,
      bound_iam_principal_arn: 'arn:aws:iam::1:role/*',
    });
    expect(res.status, res.text).to.equal(204);
    expect((await h.root.get('auth/cloud/role/vault-names')).body.data).to.deep.include({ inferred_cloud_region: 'us-west-2', resolve_cloud_unique_ids: false });
  });

  it('allows role_tag only on ec2 roles, within the EC2 tag key limit', async () => {
    expect(await error('tagged', { bound_iam_principal_arn: 'arn:aws:iam::1:user/*', role_tag: 'VaultRole' })).to.equal(
      'tried to enable role_tag when not using ec2 auth method',
    );
    expect(await error('tagged', { auth_type: 'ec2', bound_ami_id: 'a', role_tag: 'k'.repeat(128) })).to.equal(
      'length of role tag exceeds the EC2 key limit of 127 characters',
    );
    expect((await h.writeRole('tagged', { auth_type: 'ec2', bound_ami_id: 'a', role_tag: 'VaultRole' })).status).to.equal(204);
    expect((await h.root.get('auth/cloud/role/tagged')).body.data.role_tag).to.equal('VaultRole');
  });

  it('keeps allow_instance_migration and disallow_reauthentication to ec2, and apart', async () => {
    const iam = { bound_iam_principal_arn: 'arn:aws:iam::1:user/*' };
    expect(await error('reauth', { ...iam, disallow_reauthentication: false })).to.equal('specified disallow_reauthentication when not using ec2 auth type');
    expect(await error('reauth', { ...iam, allow_instance_migration: true })).to.equal('specified allow_instance_migration when not using ec2 auth type');
    expect(await error('reauth', { auth_type: 'ec2', bound_ami_id: 'a', allow_instance_migration: true, disallow_reauthentication: true })).to.equal(
      'cannot specify both disallow_reauthentication=true and allow_instance_migration=true',
    );
    await h.writeRole('reauth', { auth_type: 'ec2', bound_ami_id: 'a', allow_instance_migration: true });
    expect(await error('reauth', { disallow_reauthentication: true })).to.equal('cannot specify both disallow_reauthentication=true and allow_instance_migration=true');
  });

  it('refuses an unknown auth_type and a change of auth_type', async () => {
    expect(await error('types', { auth_type: 'gce', bound_ami_id: 'a' })).to.equal('unrecognized auth_type: gce');
    await h.writeRole('types', { auth_type: 'ec2', bound_ami_id: 'a' });
    expect(await error('types', { auth_type: 'iam' })).to.equal('changing auth_type on a role is not allowed');
    expect((await h.writeRole('types', { auth_type: 'ec2', bound_ami_id: 'b' })).status).to.equal(204);
  });

  it('checks token settings as Vault does', async () => {
    const iam = { bound_iam_principal_arn: 'arn:aws:iam::1:user/*' };
    expect(await error('tokens', { ...iam, token_ttl: '2h', token_max_ttl: '1h' })).to.equal("'token_ttl' cannot be greater than 'token_max_ttl'");
    expect(await error('tokens', { ...iam, token_type: 'default-service' })).to.equal('invalid \'token_type\' value "default-service"');
    expect(await error('tokens', { ...iam, token_type: 'batch', token_period: '1h' })).to.contain("'token_type' cannot be 'batch'");
    expect(await error('tokens', { ...iam, token_bound_cidrs: '10.0.0.0/33' })).to.equal('invalid CIDR block "10.0.0.0/33" in token_bound_cidrs');
    expect(await error('tokens', { ...iam, token_period: '10000h' })).to.contain("is greater than the backend's maximum lease TTL");
    expect(await error('tokens', { ...iam, token_num_uses: -1 })).to.equal("'token_num_uses' cannot be negative");
    const warned = await h.writeRole('tokens', { ...iam, token_max_ttl: '10000h', token_bound_cidrs: '10.0.0.0/8,127.0.0.1', token_type: 'batch' });
    expect(warned.status).to.equal(200);
    expect(warned.body.warnings[0]).to.equal('Given max ttl of 36000000 seconds greater than current mount/system default of 2764800 seconds; max ttl will be capped at login time');
    expect((await h.root.get('auth/cloud/role/tokens')).body.data).to.deep.include({ token_bound_cidrs: ['10.0.0.0/8', '127.0.0.1'], token_type: 'batch' });
  });

  it('resolves bound principals to unique IDs, but not wildcards, and fails when one cannot be resolved', async () => {
    const role = h.world.addRole(MAIN_ACCOUNT, 'app', { path: '/services/' });
    const res = await h.writeRole('resolved', { bound_iam_principal_arn: [role.arn, `arn:aws:iam::${MAIN_ACCOUNT}:user/ops-*`] });
    expect(res.status, res.text).to.equal(204);
    expect((await h.root.get('auth/cloud/role/resolved')).body.data.bound_iam_principal_id).to.deep.equal([role.roleId]);
    const missing = `arn:aws:iam::${MAIN_ACCOUNT}:user/ghost`;
    expect(await error('unresolvable', { bound_iam_principal_arn: missing })).to.equal(
      `unable to resolve ARN "${missing}" to internal ID: NoSuchEntity: The user with name ghost cannot be found.`,
    );
    expect((await h.root.get('auth/cloud/role/unresolvable')).status).to.equal(404);
    expect(await error('unresolvable', { bound_iam_principal_arn: `arn:aws:sts::${MAIN_ACCOUNT}:assumed-role/r/s` })).to.contain('unrecognized entity type "assumed-role"');
    expect(await error('unresolvable', { bound_iam_principal_arn: 'arn:aws:iam::999988887777:user/x' })).to.equal(
      `unable to resolve ARN "arn:aws:iam::999988887777:user/x" to internal ID: unable to fetch client for account ID "999988887777" -- default client is for account "${MAIN_ACCOUNT}"`,
    );
  });

  it('gives up on an IAM endpoint that never answers, within the provider timeout', async function () {
    this.timeout(10_000);
    const user = h.world.addUser(MAIN_ACCOUNT, 'slow');
    h.fake.interceptor = () => true;
    const started = Date.now();
    try {
      expect(await error('slow', { bound_iam_principal_arn: user.arn })).to.equal(`unable to resolve ARN "${user.arn}" to internal ID: GetUser: the provider did not answer in time`);
    } finally {
      h.fake.interceptor = undefined;
    }
    expect(Date.now() - started).to.be.below(5_000);
  });

  it('refreshes the unique ID when the same ARN is written again after the principal was recreated', async () => {
    const user = h.world.addUser(MAIN_ACCOUNT, 'recreated');
    await h.writeRole('refresh', { bound_iam_principal_arn: user.arn });
    const again = h.world.recreateUser(user);
    expect(again.userId).not.to.equal(user.userId);
    expect((await h.root.get('auth/cloud/role/refresh')).body.data.bound_iam_principal_id).to.deep.equal([user.userId]);
    expect((await h.writeRole('refresh', { bound_iam_principal_arn: user.arn })).status).to.equal(204);
    expect((await h.root.get('auth/cloud/role/refresh')).body.data.bound_iam_principal_id).to.deep.equal([again.userId]);
  });

  it('fails the refresh when the service may no longer read the principal, and keeps the old entry', async () => {
    const user = h.world.addUser(MAIN_ACCOUNT, 'locked');
    await h.writeRole('locked', { bound_iam_principal_arn: user.arn });
    h.world.denied.add(`${h.serviceUser.arn}|GetUser`);
    try {
      const message = await error('locked', { bound_iam_principal_arn: user.arn });
      expect(message).to.equal(`unable to resolve ARN "${user.arn}" to internal ID: AccessDenied: User: ${h.serviceUser.arn} is not authorized to perform: iam:GetUser`);
    } finally {
      h.world.denied.clear();
    }
    expect((await h.root.get('auth/cloud/role/locked')).body.data.bound_iam_principal_id).to.deep.equal([user.userId]);
  });

  it('turns resolve_cloud_unique_ids on at once (or fails) and never off', async () => {
    const user = h.world.addUser(MAIN_ACCOUNT, 'late');
    expect((await h.writeRole('late', { bound_iam_principal_arn: user.arn, resolve_cloud_unique_ids: false })).status).to.equal(204);
    expect((await h.root.get('auth/cloud/role/late')).body.data.bound_iam_principal_id).to.deep.equal([]);
    h.world.removeUser(user);
    expect(await error('late', { resolve_cloud_unique_ids: true })).to.contain(`unable to resolve ARN "${user.arn}" to internal ID`);
    expect((await h.root.get('auth/cloud/role/late')).body.data.resolve_cloud_unique_ids).to.equal(false);
    const back = h.world.addUser(MAIN_ACCOUNT, 'late');
    expect((await h.writeRole('late', { resolve_cloud_unique_ids: true })).status).to.equal(204);
    expect((await h.root.get('auth/cloud/role/late')).body.data.bound_iam_principal_id).to.deep.equal([back.userId]);
    expect(await error('late', { resolve_cloud_unique_ids: false })).to.equal('changing resolve_cloud_unique_ids from true to false is not allowed');
  });

  it('without resolve_cloud_unique_ids, refuses a bound ARN with a path (a login never presents one)', async () => {
    const message = await error('paths', { bound_iam_principal_arn: `arn:aws:iam::${MAIN_ACCOUNT}:role/team/app`, resolve_cloud_unique_ids: false });
    expect(message).to.contain('has a path');
    expect((await h.writeRole('paths', { bound_iam_principal_arn: `arn:aws:iam::${MAIN_ACCOUNT}:role/team/*`, resolve_cloud_unique_ids: false })).status).to.equal(204);
    expect(await error('paths2', { bound_iam_principal_arn: 'not-an-arn', resolve_cloud_unique_ids: false })).to.contain('invalid bound_iam_principal_arn "not-an-arn"');
  });

  it('refuses role names outside the path-name pattern', async () => {
    expect((await h.writeRole('bad%20name', { bound_ami_id: 'a', auth_type: 'ec2' })).status).to.equal(400);
  });
});
