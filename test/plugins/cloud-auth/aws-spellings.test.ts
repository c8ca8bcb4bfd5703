/**
 * Migrating from Vault: the auth type `aws` mounts the cloud method, every `aws` spelling of a field
 * is taken wherever the `cloud` one is, reads give Vault's names back, and login metadata carries
 * Vault's key names beside ours.
 */
import { expect } from 'chai';
import { startCloudHarness, MAIN_ACCOUNT, type CloudHarness } from './harness.js';
import { signedLogin } from '../../fixtures/cloud/sign.js';
import { signing } from '../../fixtures/cloud/world.js';
import { testSigners } from '../../fixtures/cloud/documents.js';

describe('cloud auth under Vault\'s aws names', () => {
  let h: CloudHarness;

  before(async () => {
    h = await startCloudHarness();
    const mounted = await h.root.post('sys/auth/aws', { type: 'aws', description: 'as a Vault script enables it' });
    expect(mounted.status, mounted.text).to.equal(204);
    const configured = await h.root.post('auth/aws/config/client', {
      access_key: h.serviceKey.accessKeyId,
      secret_key: h.serviceKey.secretAccessKey,
      endpoint: h.fake.url,
      iam_endpoint: h.fake.url,
      sts_endpoint: h.fake.url,
      sts_region: 'us-east-1',
      max_retries: 0,
    });
    expect(configured.status, configured.text).to.equal(204);
  });
  after(() => h.close());

  it('mounts auth type aws as the cloud method, and lists the mount with the type it was enabled with', async () => {
    const auths = (await h.root.get('sys/auth')).body.data;
    expect(auths['aws/']).to.include({ type: 'aws', description: 'as a Vault script enables it' });
    expect(auths['cloud/']).to.include({ type: 'cloud' });
    const help = await h.root.get('auth/aws/config/identity?help=1');
    expect(help.status, help.text).to.equal(200);
    expect(help.body.help).to.contain('iam_metadata');
  });

  it('takes the aws spellings of role fields, and reads both spellings back', async () => {
    const written = await h.root.post('auth/aws/role/migrated', {
      auth_type: 'iam',
      bound_iam_principal_arn: `arn:aws:iam::${MAIN_ACCOUNT}:role/app/*`,
      resolve_aws_unique_ids: false,
      inferred_entity_type: 'ec2_instance',
      inferred_aws_region: 'eu-west-1',
    });
    expect(written.status, written.text).to.equal(204);
    const role = (await h.root.get('auth/aws/role/migrated')).body.data;
    expect(role).to.include({
      inferred_aws_region: 'eu-west-1',
      inferred_cloud_region: 'eu-west-1',
      resolve_aws_unique_ids: false,
      resolve_cloud_unique_ids: false,
    });
  });

  it('takes aws_public_cert on config/certificate and reads it back under both names', async () => {
    const pem = testSigners().identity.certificatePem;
    const written = await h.root.post('auth/aws/config/certificate/migrated', { aws_public_cert: pem, type: 'identity' });
    expect(written.status, written.text).to.equal(204);
    const read = (await h.root.get('auth/aws/config/certificate/migrated')).body.data;
    expect(read.aws_public_cert).to.equal(read.cloud_public_cert);
    expect(read.aws_public_cert).to.contain('BEGIN CERTIFICATE');
  });

  it('takes inferred_aws_region in config/identity metadata lists, as written, on both mount types', async () => {
    for (const mount of ['aws', 'cloud']) {
      const written = await h.root.post(`auth/${mount}/config/identity`, { iam_metadata: ['inferred_aws_region', 'client_arn'] });
      expect(written.status, written.text).to.equal(204);
      expect((await h.root.get(`auth/${mount}/config/identity`)).body.data.iam_metadata).to.deep.equal(['inferred_aws_region', 'client_arn']);
      const both = await h.root.post(`auth/${mount}/config/identity`, { iam_metadata: 'inferred_aws_region,inferred_cloud_region' });
      expect(both.status, both.text).to.equal(204);
      expect((await h.root.get(`auth/${mount}/config/identity`)).body.data.iam_metadata).to.deep.equal(['inferred_aws_region']);
      const unknown = await h.root.post(`auth/${mount}/config/identity`, { iam_metadata: 'inferred_gcp_region' });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.errors[0]).to.contain('contains an unavailable field');
      await h.root.post(`auth/${mount}/config/identity`, { iam_metadata: 'default' });
    }
  });

  it('logs in through the aws mount, with Vault\'s metadata key beside ours', async () => {
    const region = 'us-west-2';
    const instanceRole = h.world.addRole(MAIN_ACCOUNT, 'migrated-web');
    h.world.addInstanceProfile(MAIN_ACCOUNT, 'migrated-profile', ['migrated-web']);
    const instance = h.world.addInstance({ accountId: MAIN_ACCOUNT, region, profileName: 'migrated-profile' });
    const role = await h.root.post('auth/aws/role/web', {
      auth_type: 'iam',
      bound_iam_principal_arn: instanceRole.arn,
      inferred_entity_type: 'ec2_instance',
      inferred_aws_region: region,
    });
    expect(role.status, role.text).to.equal(204);
    await h.root.post('auth/aws/config/identity', { iam_metadata: 'inferred_aws_region,inferred_entity_id,account_id' });
    const login = await h.anon.post('auth/aws/login', await signedLogin({ credentials: signing(h.world.instanceCredentials(instance)), role: 'web' }));
    expect(login.status, login.text).to.equal(200);
    expect(login.body.auth.metadata).to.deep.include({
      inferred_aws_region: region,
      inferred_cloud_region: region,
      inferred_entity_id: instance.instanceId,
      account_id: MAIN_ACCOUNT,
    });
    const lookup = await h.root.post('auth/token/lookup', { token: login.body.auth.client_token });
    expect(lookup.body.data.path).to.equal('auth/aws/login');
    expect(lookup.body.data.meta).to.include({ inferred_aws_region: region });
  });
});
