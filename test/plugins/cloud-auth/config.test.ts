/** The configuration endpoints of the cloud auth method, over HTTP. */
import { expect } from 'chai';
import { startCloudHarness, MAIN_ACCOUNT, type CloudHarness } from './harness.js';
import { testSigners } from '../../fixtures/cloud/documents.js';

describe('cloud auth configuration', () => {
  let h: CloudHarness;
  before(async () => {
    h = await startCloudHarness();
  });
  after(() => h.close());

  describe('config/client', () => {
    it('is 404 until written, merges updates, never returns the secret key, and deletes', async () => {
      expect((await h.root.get('auth/cloud/config/client')).status).to.equal(404);
      await h.configure({ iam_server_id_header_value: 'keywarden.example', allowed_sts_header_values: 'x-amz-expires,X-AMZ-Foo' });
      expect((await h.root.post('auth/cloud/config/client', { max_retries: 2 })).status).to.equal(204);
      const read = await h.root.get('auth/cloud/config/client');
      expect(read.status).to.equal(200);
      expect(read.body.data).to.deep.equal({
        access_key: h.serviceKey.accessKeyId,
        endpoint: h.fake.url,
        iam_endpoint: h.fake.url,
        sts_endpoint: h.fake.url,
        sts_region: 'us-east-1',
        use_sts_region_from_client: false,
        iam_server_id_header_value: 'keywarden.example',
        allowed_sts_header_values: ['X-Amz-Expires', 'X-Amz-Foo'],
        max_retries: 2,
      });
      expect(read.text).not.to.contain(h.serviceKey.secretAccessKey);
      expect((await h.root.post('auth/cloud/config/client', { iam_server_id_header_value: '' })).status).to.equal(204);
      expect((await h.root.get('auth/cloud/config/client')).body.data.iam_server_id_header_value).to.equal('');
      expect((await h.root.delete('auth/cloud/config/client')).status).to.equal(204);
      expect((await h.root.get('auth/cloud/config/client')).status).to.equal(404);
    });

    it('refuses endpoints that are not http(s) URLs and retries below -1', async () => {
      const bad = await h.root.post('auth/cloud/config/client', { sts_endpoint: 'file:///etc/passwd' });
      expect(bad.status).to.equal(400);
      expect(bad.body.errors[0]).to.equal('invalid sts_endpoint "file:///etc/passwd": must be an http or https URL');
      expect((await h.root.post('auth/cloud/config/client', { endpoint: 'not a url' })).body.errors[0]).to.contain('invalid endpoint');
      expect((await h.root.post('auth/cloud/config/client', { max_retries: -2 })).status).to.equal(400);
    });

    it('needs a token', async () => {
      expect((await h.anon.get('auth/cloud/config/client')).status).to.equal(403);
    });
  });

  describe('config/identity', () => {
    it('reads the defaults before any write', async () => {
      const read = await h.root.get('auth/cloud/config/identity');
      expect(read.body.data).to.deep.equal({
        iam_alias: 'role_id',
        iam_metadata: ['account_id', 'auth_type'],
        ec2_alias: 'role_id',
        ec2_metadata: ['account_id', 'auth_type'],
      });
    });

    it('stores chosen fields, "" or [] for none, and only "default" alone restores the defaults', async () => {
      await h.root.post('auth/cloud/config/identity', { iam_alias: 'full_arn', iam_metadata: 'client_arn,canonical_arn', ec2_metadata: [] });
      let data = (await h.root.get('auth/cloud/config/identity')).body.data;
      expect(data).to.deep.include({ iam_alias: 'full_arn', iam_metadata: ['client_arn', 'canonical_arn'], ec2_metadata: [] });
      await h.root.post('auth/cloud/config/identity', { iam_metadata: '' });
      expect((await h.root.get('auth/cloud/config/identity')).body.data.iam_metadata).to.deep.equal([]);
      await h.root.post('auth/cloud/config/identity', { iam_metadata: ['default'], ec2_metadata: 'default', iam_alias: 'role_id' });
      data = (await h.root.get('auth/cloud/config/identity')).body.data;
      expect(data.iam_metadata).to.deep.equal(['account_id', 'auth_type']);
      expect(data.ec2_metadata).to.deep.equal(['account_id', 'auth_type']);
    });

    it('refuses unknown aliases, default mixed with fields, and fields of the other login type', async () => {
      const alias = await h.root.post('auth/cloud/config/identity', { iam_alias: 'instance_id' });
      expect(alias.body.errors[0]).to.equal('iam_alias of "instance_id" not in set of allowed values: [role_id unique_id full_arn]');
      const ec2Alias = await h.root.post('auth/cloud/config/identity', { ec2_alias: 'full_arn' });
      expect(ec2Alias.body.errors[0]).to.equal('ec2_alias of "full_arn" not in set of allowed values: [role_id instance_id image_id]');
      const mixed = await h.root.post('auth/cloud/config/identity', { iam_metadata: ['default', 'client_arn'] });
      expect(mixed.status).to.equal(400);
      expect(mixed.body.errors[0]).to.equal('["default" "client_arn"] contains default - default can\'t be used in combination with other fields');
      const unavailable = await h.root.post('auth/cloud/config/identity', { ec2_metadata: 'client_arn' });
      expect(unavailable.body.errors[0]).to.equal('"client_arn" contains an unavailable field, please select from "account_id, auth_type, ami_id, instance_id, region"');
    });
  });

  describe('config/certificate', () => {
    const pem = () => testSigners().identity.certificatePem;

    it('registers PEM or base64 PEM, reads it back decoded with its type, lists and deletes', async () => {
      expect((await h.root.post('auth/cloud/config/certificate/plain', { cloud_public_cert: pem() })).status).to.equal(204);
      const encoded = Buffer.from(testSigners().rsa2048.certificatePem).toString('base64');
      expect((await h.root.post('auth/cloud/config/certificate/encoded', { cloud_public_cert: encoded, type: 'IDENTITY' })).status).to.equal(204);
      const plain = await h.root.get('auth/cloud/config/certificate/plain');
      expect(plain.body.data).to.deep.equal({ cloud_public_cert: pem(), aws_public_cert: pem(), type: 'pkcs7' });
      const read = await h.root.get('auth/cloud/config/certificate/encoded');
      const decoded = testSigners().rsa2048.certificatePem;
      expect(read.body.data).to.deep.equal({ cloud_public_cert: decoded, aws_public_cert: decoded, type: 'identity' });
      expect((await h.root.list('auth/cloud/config/certificates')).body.data.keys).to.deep.equal(['encoded', 'plain']);
      expect((await h.root.delete('auth/cloud/config/certificate/encoded')).status).to.equal(204);
      expect((await h.root.get('auth/cloud/config/certificate/encoded')).status).to.equal(404);
    });

    it('takes aws_public_cert, the name Vault clients send', async () => {
      expect((await h.root.post('auth/cloud/config/certificate/from-hvac', { aws_public_cert: pem() })).status).to.equal(204);
      expect((await h.root.get('auth/cloud/config/certificate/from-hvac')).body.data.cloud_public_cert).to.equal(pem());
    });

    it('refuses a missing certificate, two PEM blocks, a non-certificate and an unknown type', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'missing cloud_public_cert'],
        [{ cloud_public_cert: pem() + pem() }, 'invalid certificate; should be one PEM block only'],
        [{ cloud_public_cert: 'hello' }, 'invalid certificate; should be one PEM block only'],
        [{ cloud_public_cert: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }, 'invalid certificate; failed to decode and parse certificate'],
        [{ cloud_public_cert: testSigners().identity.privateKeyPem }, 'not a CERTIFICATE'],
        [{ cloud_public_cert: pem(), type: 'x509' }, 'invalid certificate type "x509"'],
      ];
      for (const [body, message] of cases) {
        const res = await h.root.post('auth/cloud/config/certificate/bad', body);
        expect(res.status, message).to.equal(400);
        expect(res.body.errors[0]).to.contain(message);
      }
      expect((await h.root.get('auth/cloud/config/certificate/bad')).status).to.equal(404);
    });
  });

  describe('config/sts', () => {
    it('associates, reads, lists and deletes roles per account', async () => {
      const arn = 'arn:aws:iam::444455556666:role/keywarden-reader';
      expect((await h.root.post('auth/cloud/config/sts/444455556666', { sts_role: arn })).status).to.equal(204);
      expect((await h.root.get('auth/cloud/config/sts/444455556666')).body.data).to.deep.equal({ sts_role: arn });
      expect((await h.root.list('auth/cloud/config/sts')).body.data.keys).to.deep.equal(['444455556666']);
      expect((await h.root.delete('auth/cloud/config/sts/444455556666')).status).to.equal(204);
      expect((await h.root.list('auth/cloud/config/sts')).status).to.equal(404);
    });

    it('requires a role on create and refuses an empty one on update', async () => {
      expect((await h.root.post('auth/cloud/config/sts/777788889999', {})).body.errors[0]).to.equal('missing sts role');
      await h.root.post('auth/cloud/config/sts/777788889999', { sts_role: 'arn:aws:iam::777788889999:role/r' });
      const empty = await h.root.post('auth/cloud/config/sts/777788889999', { sts_role: '' });
      expect(empty.status).to.equal(400);
      expect(empty.body.errors[0]).to.equal('sts role cannot be empty');
    });
  });

  describe('config/tidy', () => {
    for (const [current, deprecated] of [
      ['identity-accesslist', 'identity-whitelist'],
      ['roletag-denylist', 'roletag-blacklist'],
    ] as const) {
      it(`${current}: 404 until written, 72h and false by default, and ${deprecated} is the same entry`, async () => {
        expect((await h.root.get(`auth/cloud/config/tidy/${current}`)).status).to.equal(404);
        expect((await h.root.post(`auth/cloud/config/tidy/${current}`, {})).status).to.equal(204);
        expect((await h.root.get(`auth/cloud/config/tidy/${current}`)).body.data).to.deep.equal({ safety_buffer: 259200, disable_periodic_tidy: false });
        expect((await h.root.post(`auth/cloud/config/tidy/${deprecated}`, { safety_buffer: '1h', disable_periodic_tidy: true })).status).to.equal(204);
        expect((await h.root.get(`auth/cloud/config/tidy/${current}`)).body.data).to.deep.equal({ safety_buffer: 3600, disable_periodic_tidy: true });
        expect((await h.root.post(`auth/cloud/config/tidy/${current}`, { disable_periodic_tidy: false })).status).to.equal(204);
        expect((await h.root.get(`auth/cloud/config/tidy/${deprecated}`)).body.data).to.deep.equal({ safety_buffer: 3600, disable_periodic_tidy: false });
        expect((await h.root.post(`auth/cloud/config/tidy/${current}`, { safety_buffer: 'soon' })).status).to.equal(400);
        expect((await h.root.delete(`auth/cloud/config/tidy/${deprecated}`)).status).to.equal(204);
        expect((await h.root.get(`auth/cloud/config/tidy/${current}`)).status).to.equal(404);
      });
    }
  });

  describe('config/rotate-root', () => {
    it('refuses without stored keys', async () => {
      await h.root.delete('auth/cloud/config/client');
      expect((await h.root.post('auth/cloud/config/rotate-root')).body.errors[0]).to.equal("can't update client config because it's unset");
      await h.root.post('auth/cloud/config/client', { secret_key: 'x' });
      expect((await h.root.post('auth/cloud/config/rotate-root')).body.errors[0]).to.equal("can't update access_key because it's unset");
      await h.root.post('auth/cloud/config/client', { access_key: 'AKIAX', secret_key: '' });
      expect((await h.root.post('auth/cloud/config/rotate-root')).body.errors[0]).to.equal("can't update secret_key because it's unset");
    });

    it('creates a new key, stores it, deletes the old one, and the new key works', async () => {
      await h.configure();
      const old = h.serviceKey.accessKeyId;
      const res = await h.root.post('auth/cloud/config/rotate-root');
      expect(res.status, res.text).to.equal(200);
      const fresh = res.body.data.access_key as string;
      expect(fresh).to.match(/^AKIA/).and.not.equal(old);
      expect(Object.keys(res.body.data)).to.deep.equal(['access_key']);
      expect(h.world.keys.has(old)).to.equal(false);
      expect(h.world.keys.get(fresh)?.owner).to.deep.include({ kind: 'user' });
      expect((await h.root.get('auth/cloud/config/client')).body.data.access_key).to.equal(fresh);
      h.serviceKey = h.world.keys.get(fresh)!;
      // The stored key is what provider calls now use: resolving a role's principal goes through it.
      const alice = h.world.addUser(MAIN_ACCOUNT, 'rotated-check');
      expect((await h.writeRole('rotated-check', { bound_iam_principal_arn: alice.arn })).status).to.equal(204);
      expect(h.fake.callsOf('iam', 'GetUser').at(-1)?.accessKeyId).to.equal(fresh);
    });

    it('answers 502 when IAM cannot be reached, and keeps the stored key', async () => {
      await h.configure({ iam_endpoint: 'http://127.0.0.1:9' });
      const res = await h.root.post('auth/cloud/config/rotate-root');
      expect(res.status).to.equal(502);
      expect(res.body.errors[0]).to.equal('error calling GetUser: GetUser: the provider could not be reached (ECONNREFUSED)');
      expect((await h.root.get('auth/cloud/config/client')).body.data.access_key).to.equal(h.serviceKey.accessKeyId);
      await h.configure();
    });

    it('fails clearly when the user already has two keys, and keeps the stored key', async () => {
      h.world.keyFor(h.serviceUser);
      const res = await h.root.post('auth/cloud/config/rotate-root');
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.equal('error calling CreateAccessKey: LimitExceeded: Cannot exceed quota for AccessKeysPerUser: 2');
      expect((await h.root.get('auth/cloud/config/client')).body.data.access_key).to.equal(h.serviceKey.accessKeyId);
    });
  });
});
