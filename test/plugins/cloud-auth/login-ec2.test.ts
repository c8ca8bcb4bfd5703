/**
 * ec2 login over HTTP against the fake provider (docs/cloud-auth.md, "An ec2 login, step by step"):
 * the signed document, the role, the running instance and its constraints, the identity access list
 * with nonces, migration and disallow_reauthentication; bad input is a 4xx that names it and leaves
 * the access list alone.
 */
import { expect } from 'chai';
import forge from 'node-forge';
import { startCloudHarness, ec2LoginBody, MAIN_ACCOUNT, SATELLITE_ACCOUNT, type CloudHarness } from './harness.js';
import type { TestResponse } from '../../helpers/http.js';
import { tempDir } from '../../helpers/server.js';
import type { Instance } from '../../fixtures/cloud/world.js';
import { documentPkcs7, documentSignature, identityDocument, makeSigner, testSigners } from '../../fixtures/cloud/documents.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('cloud auth ec2 login', () => {
  let h: CloudHarness;
  const region = 'us-east-1';
  const AMI = 'ami-0e2c8caa4b6378d8c';

  const newInstance = (fields: Partial<Instance> = {}) => h.world.addInstance({ accountId: MAIN_ACCOUNT, region, imageId: AMI, ...fields });
  const entryOf = (instance: Instance) => h.root.get(`auth/cloud/identity-accesslist/${instance.instanceId}`);
  const expectError = (res: TestResponse, status: number, message: string | RegExp) => {
    expect(res.status, res.text).to.equal(status);
    if (typeof message === 'string') expect(res.body.errors).to.deep.equal([message]);
    else expect(res.body.errors[0]).to.match(message);
  };
  const expectOk = (res: TestResponse) => {
    expect(res.status, res.text).to.equal(200);
    return res.body.auth as { client_token: string; policies: string[]; metadata: Record<string, string>; lease_duration: number; entity_id: string };
  };

  before(async () => {
    h = await startCloudHarness();
    await h.configure();
    await h.registerTestCertificates();
    await h.writeRole('web', { auth_type: 'ec2', bound_ami_id: AMI, token_policies: 'web,api', token_ttl: '10m' });
  });
  after(() => h.close());

  describe('proofs', () => {
    it('logs in with the rsa2048 PKCS#7 document, the pkcs7 document and identity + signature', async () => {
      for (const style of ['rsa2048', 'pkcs7', 'identity'] as const) {
        const instance = newInstance();
        const auth = expectOk(await h.ec2Login(instance, { style, role: 'web' }));
        expect(auth.policies, style).to.deep.equal(['api', 'default', 'web']);
        expect(auth.lease_duration).to.equal(600);
        expect(auth.metadata).to.include({ role: 'web', role_tag_max_ttl: '0s', account_id: MAIN_ACCOUNT, auth_type: 'ec2' });
        expect(auth.metadata.nonce).to.match(UUID);
        expect((await entryOf(instance)).body.data.client_nonce).to.equal(auth.metadata.nonce);
      }
    });

    it("takes the role named after the document's AMI ID when no role is given", async () => {
      const ami = 'ami-00000000000000abc';
      await h.writeRole(ami, { auth_type: 'ec2', bound_ami_id: ami, token_policies: 'by-ami' });
      const auth = expectOk(await h.ec2Login(newInstance({ imageId: ami })));
      expect(auth.policies).to.include('by-ami');
      expect(auth.metadata.role).to.equal(ami);
      expectError(await h.ec2Login(newInstance({ imageId: 'ami-0000000000000dead' })), 400, 'entry for role "ami-0000000000000dead" not found');
    });

    it('takes the documents the metadata service serves, as a client on the instance fetches them', async () => {
      const instance = newInstance();
      h.world.metadataInstanceId = instance.instanceId;
      const token = await (await fetch(`${h.fake.url}/latest/api/token`, { method: 'PUT', headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '60' } })).text();
      const get = async (path: string) => (await fetch(`${h.fake.url}/latest/dynamic/instance-identity/${path}`, { headers: { 'x-aws-ec2-metadata-token': token } })).text();
      const pkcs7 = (await get('rsa2048')).replace(/\n/g, '');
      const first = expectOk(await h.anon.post('auth/cloud/login', { role: 'web', pkcs7 }));
      const identity = Buffer.from(await get('document')).toString('base64');
      expectOk(await h.anon.post('auth/cloud/login', { role: 'web', identity, signature: await get('signature'), nonce: first.metadata.nonce }));
    });
  });

  describe('bad input', () => {
    const signers = () => testSigners();

    it('is a 400 that names the problem, writes nothing to the access list, and the server keeps serving', async () => {
      const instance = newInstance();
      const document = identityDocument(instance);
      const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
      const tamperedPkcs7 = (() => {
        const der = Buffer.from(documentPkcs7(document, signers().rsa2048), 'base64');
        const at = der.indexOf(Buffer.from(instance.instanceId));
        der[at + 3]! ^= 1;
        return der.toString('base64');
      })();
      const otherDocument = identityDocument({ ...instance, imageId: 'ami-0ffffffffffffffff' });
      const cases: [Record<string, unknown>, string | RegExp][] = [
        [{ pkcs7: 'MIAG$$not-base64' }, 'failed to decode the PEM encoded PKCS#7 signature: not base64'],
        [{ pkcs7: '-----BEGIN PKCS7-----\nMIAGCSqGSIb3DQEHAqCAMIACAQEx\n' }, 'failed to decode the PEM encoded PKCS#7 signature: not base64'],
        [{ pkcs7: base64('this is not ASN.1') }, /^failed to verify the signature: failed to parse the BER encoded PKCS#7 signature: /],
        [{ pkcs7: base64('-----BEGIN CERTIFICATE-----') }, /^failed to verify the signature: failed to parse the BER encoded PKCS#7 signature/],
        [{ pkcs7: documentPkcs7(document, makeSigner('stranger')).replace(/\n/g, '') }, /^failed to verify the signature: no trusted certificate for the signer \(serial [0-9A-F]+\)$/],
        [{ pkcs7: documentPkcs7(document, makeSigner('stranger'), { embedCertificate: true }).replace(/\n/g, '') }, /^failed to verify the signature: no trusted certificate for the signer/],
        [{ pkcs7: tamperedPkcs7 }, 'failed to verify the signature: the message digest does not match the content: the document was altered'],
        [{ pkcs7: documentPkcs7(document, signers().rsa2048, { signingTime: new Date('2019-06-01T00:00:00Z') }).replace(/\n/g, '') }, /^failed to verify the signature: the signing time 2019-06-01T00:00:00.000Z is outside the validity/],
        [{ pkcs7: documentPkcs7(document, signers().pkcs7, { digest: 'sha1' }).replace(/\n/g, '') }, /^failed to verify the signature: the signature uses SHA-1 .*cloud_auth\.allow_sha1_signatures/],
        [{ pkcs7: documentPkcs7('not json', signers().rsa2048).replace(/\n/g, '') }, 'the signed instance identity document is not JSON'],
        [{ identity: base64(otherDocument), signature: documentSignature(document, signers().identity) }, 'instance identity verification using SHA256 RSA signature is unsuccessful'],
        [{ identity: base64(document), signature: documentSignature(document, makeSigner('stranger')) }, 'instance identity verification using SHA256 RSA signature is unsuccessful'],
        [{ identity: 'e30$', signature: documentSignature(document, signers().identity) }, 'failed to base64 decode the instance identity document'],
        [{ identity: base64(document), signature: '@@@@' }, 'failed to base64 decode the SHA256 RSA signature of the instance identity document'],
        [{ identity: base64(document), signature: '' }, 'either pkcs7 or a tuple containing the instance identity document and its SHA256 RSA signature needs to be provided'],
        [{ ...ec2LoginBody(instance), ...ec2LoginBody(instance, { style: 'identity' }) }, 'both pkcs7 and a tuple containing the instance identity document and its SHA256 RSA signature is supplied; provide only one'],
        [{ signature: 'abcd' }, 'supplied some of the auth values for the ec2 auth type but not all'],
      ];
      for (const [body, message] of cases) {
        const res = await h.anon.post('auth/cloud/login', { role: 'web', ...body });
        expectError(res, 400, message);
        expect((await entryOf(instance)).status, JSON.stringify(body).slice(0, 80)).to.equal(404);
      }
      expectOk(await h.ec2Login(instance, { role: 'web' }));
    });
  });

  describe('role and instance checks, in order', () => {
    it('refuses an iam role, a client outside token_bound_cidrs, and an unknown role', async () => {
      await h.writeRole('iam-role', { bound_iam_principal_arn: h.serviceUser.arn });
      expectError(await h.ec2Login(newInstance(), { role: 'iam-role' }), 400, 'auth method ec2 not allowed for role iam-role');
      await h.writeRole('cidr', { auth_type: 'ec2', bound_ami_id: AMI, token_bound_cidrs: '10.0.0.0/8' });
      expectError(await h.ec2Login(newInstance(), { role: 'cidr' }), 403, 'permission denied');
      await h.writeRole('cidr', { token_bound_cidrs: '127.0.0.0/8' });
      expectOk(await h.ec2Login(newInstance(), { role: 'cidr' }));
      expectError(await h.ec2Login(newInstance(), { role: 'nope' }), 400, 'entry for role "nope" not found');
    });

    it('needs the instance to exist and run, asked in the document\'s region', async () => {
      const stopped = newInstance({ state: 'stopped' });
      expectError(await h.ec2Login(stopped, { role: 'web' }), 400, "failed to verify instance ID: instance is not in 'running' state");
      const ghost = { ...newInstance(), instanceId: 'i-0badbadbadbadbad0' };
      expectError(await h.ec2Login(ghost, { role: 'web' }), 400, /^failed to verify instance ID: error fetching description for instance ID "i-0badbadbadbadbad0": .*InvalidInstanceID.NotFound/);
      const elsewhere = newInstance({ region: 'eu-west-1' });
      expectOk(await h.ec2Login(elsewhere, { role: 'web' }));
      expect(h.fake.callsOf('ec2', 'DescribeInstances').at(-1)).to.include({ error: '' });
      for (const instance of [stopped, ghost]) expect((await entryOf(instance)).status).to.equal(404);
    });

    it('checks every instance constraint of the role against the document and the instance description', async () => {
      h.world.addRole(MAIN_ACCOUNT, 'web-instance', { path: '/apps/' });
      const profile = h.world.addInstanceProfile(MAIN_ACCOUNT, 'web-profile', ['web-instance'], { path: '/apps/' });
      const fields = { vpcId: 'vpc-web', subnetId: 'subnet-web', profileName: 'web-profile' };
      const good = {
        bound_ami_id: AMI,
        bound_account_id: MAIN_ACCOUNT,
        bound_region: region,
        bound_vpc_id: 'vpc-web',
        bound_subnet_id: 'subnet-web',
        bound_iam_instance_profile_arn: `arn:aws:iam::${MAIN_ACCOUNT}:instance-profile/apps/*`,
        bound_iam_role_arn: `arn:aws:iam::${MAIN_ACCOUNT}:role/apps/web-*`,
      };
      await h.writeRole('strict', { auth_type: 'ec2', ...good });
      const instance = newInstance(fields);
      expectOk(await h.ec2Login(instance, { role: 'strict' }));
      await h.writeRole('strict', { bound_ec2_instance_id: instance.instanceId, bound_iam_instance_profile_arn: profile.arn });
      expectOk(await h.root.delete(`auth/cloud/identity-accesslist/${instance.instanceId}`).then(() => h.ec2Login(instance, { role: 'strict' })));

      const cases: [Record<string, unknown>, (i: Instance) => string][] = [
        [{ bound_region: 'eu-west-1' }, () => `Region "${region}" does not satisfy the constraint on role "strict"`],
        [{ bound_ec2_instance_id: 'i-0000000000000000a' }, (i) => `Error validating instance: instance ID "${i.instanceId}" does not belong to the role "strict"`],
        [{ bound_account_id: '000000000000' }, () => `Error validating instance: account ID "${MAIN_ACCOUNT}" does not belong to role "strict"`],
        [{ bound_ami_id: 'ami-0000000000000000b' }, () => `Error validating instance: AMI ID "${AMI}" does not belong to role "strict"`],
        [{ bound_subnet_id: 'subnet-other' }, () => 'Error validating instance: subnet ID "subnet-web" does not satisfy the constraint on role "strict"'],
        [{ bound_vpc_id: 'vpc-other' }, () => 'Error validating instance: VPC ID "vpc-web" does not satisfy the constraint on role "strict"'],
        [{ bound_iam_instance_profile_arn: `arn:aws:iam::${MAIN_ACCOUNT}:instance-profile/other*` }, () => `Error validating instance: IAM instance profile ARN "${profile.arn}" does not satisfy the constraint role "strict"`],
        [{ bound_iam_role_arn: `arn:aws:iam::${MAIN_ACCOUNT}:role/apps/db-*` }, () => `Error validating instance: IAM role ARN "arn:aws:iam::${MAIN_ACCOUNT}:role/apps/web-instance" does not satisfy the constraint role "strict"`],
      ];
      for (const [change, message] of cases) {
        await h.writeRole('strict', { ...good, bound_ec2_instance_id: '', ...change });
        const fresh = newInstance(fields);
        expectError(await h.ec2Login(fresh, { role: 'strict' }), 400, message(fresh));
        expect((await entryOf(fresh)).status).to.equal(404);
      }
    });

    it("describes a satellite account's instance with the STS role configured for that account", async () => {
      h.world.addRole(SATELLITE_ACCOUNT, 'ec2-reader', { trust: [h.serviceUser.arn] });
      await h.root.post(`auth/cloud/config/sts/${SATELLITE_ACCOUNT}`, { sts_role: `arn:aws:iam::${SATELLITE_ACCOUNT}:role/ec2-reader` });
      await h.writeRole('satellite', { auth_type: 'ec2', bound_account_id: SATELLITE_ACCOUNT });
      const instance = h.world.addInstance({ accountId: SATELLITE_ACCOUNT, region });
      expectOk(await h.ec2Login(instance, { role: 'satellite' }));
      expect(h.fake.callsOf('ec2', 'DescribeInstances').at(-1)?.accessKeyId).to.match(/^ASIA/);
      await h.root.delete(`auth/cloud/config/sts/${SATELLITE_ACCOUNT}`);
    });

    it('answers 502 when the provider cannot be reached to describe the instance', async () => {
      await h.configure({ endpoint: 'http://127.0.0.1:9' });
      try {
        const instance = newInstance();
        expectError(await h.ec2Login(instance, { role: 'web' }), 502, /^failed to verify instance ID: /);
        expect((await entryOf(instance)).status).to.equal(404);
      } finally {
        await h.configure();
      }
    });

    it('puts the chosen ec2 metadata on the token and names the alias per config/identity', async () => {
      const aliasOf = async (auth: { entity_id: string }) => (await h.root.get(`identity/entity/id/${auth.entity_id}`)).body.data.aliases[0];
      const roleId = (await h.root.get('auth/cloud/role/web')).body.data.role_id;
      let instance = newInstance();
      let auth = expectOk(await h.ec2Login(instance, { role: 'web' }));
      expect((await aliasOf(auth)).name).to.equal(roleId);
      await h.root.post('auth/cloud/config/identity', { ec2_alias: 'instance_id', ec2_metadata: 'ami_id,instance_id,region' });
      try {
        instance = newInstance();
        auth = expectOk(await h.ec2Login(instance, { role: 'web' }));
        expect(auth.metadata).to.deep.equal({ role: 'web', role_tag_max_ttl: '0s', nonce: auth.metadata.nonce, ami_id: AMI, instance_id: instance.instanceId, region });
        const alias = await aliasOf(auth);
        expect(alias.name).to.equal(instance.instanceId);
        expect(alias.metadata).to.deep.equal({ ami_id: AMI, instance_id: instance.instanceId, region });
        await h.root.post('auth/cloud/config/identity', { ec2_alias: 'image_id', ec2_metadata: [] });
        auth = expectOk(await h.ec2Login(newInstance(), { role: 'web' }));
        expect(Object.keys(auth.metadata).sort()).to.deep.equal(['nonce', 'role', 'role_tag_max_ttl']);
        expect((await aliasOf(auth)).name).to.equal(AMI);
      } finally {
        await h.root.post('auth/cloud/config/identity', { ec2_alias: 'role_id', ec2_metadata: 'default' });
      }
    });
  });

  describe('access list and nonces', () => {
    it('returns a generated nonce once, accepts it for the next login, and refuses a login without it or with another', async () => {
      const instance = newInstance();
      const first = expectOk(await h.ec2Login(instance, { role: 'web' }));
      const nonce = first.metadata.nonce!;
      const entry = (await entryOf(instance)).body.data;
      expect(entry).to.include({ role: 'web', client_nonce: nonce, disallow_reauthentication: false, pending_time: instance.launchTime.toISOString().replace(/\.\d{3}Z$/, 'Z') });
      expect(Date.parse(entry.expiration_time) - Date.parse(entry.last_updated_time)).to.equal(768 * 3600 * 1000);
      expect(entry.creation_time).to.equal(entry.last_updated_time);

      const again = expectOk(await h.ec2Login(instance, { role: 'web', nonce }));
      expect(again.metadata).not.to.have.property('nonce');
      const updated = (await entryOf(instance)).body.data;
      expect(updated.creation_time).to.equal(entry.creation_time);
      expect(updated.client_nonce).to.equal(nonce);

      expectError(await h.ec2Login(instance, { role: 'web' }), 400, 'client nonce mismatch');
      expectError(await h.ec2Login(instance, { role: 'web', nonce: 'guessed' }), 400, 'client nonce mismatch');
      expect((await entryOf(instance)).body.data.last_updated_time).to.equal(updated.last_updated_time);
    });

    it('keeps a nonce the client chose at its first login, without echoing it', async () => {
      const instance = newInstance();
      const first = expectOk(await h.ec2Login(instance, { role: 'web', nonce: 'my-own-nonce' }));
      expect(first.metadata).not.to.have.property('nonce');
      expect((await entryOf(instance)).body.data.client_nonce).to.equal('my-own-nonce');
      expectOk(await h.ec2Login(instance, { role: 'web', nonce: 'my-own-nonce' }));
      const long = newInstance();
      expectError(await h.ec2Login(long, { role: 'web', nonce: 'n'.repeat(129) }), 400, 'client nonce exceeding the limit of 128 characters');
      expect((await entryOf(long)).status).to.equal(404);
      expectOk(await h.ec2Login(long, { role: 'web', nonce: 'n'.repeat(128) }));
    });

    it('takes an empty nonce as "no reauthentication" until the entry is deleted', async () => {
      const instance = newInstance();
      const first = expectOk(await h.ec2Login(instance, { role: 'web', nonce: '' }));
      expect(first.metadata).not.to.have.property('nonce');
      expect((await entryOf(instance)).body.data).to.include({ client_nonce: '', disallow_reauthentication: true });
      expectError(await h.ec2Login(instance, { role: 'web', nonce: '' }), 400, 'reauthentication is disabled');
      expectError(await h.ec2Login(instance, { role: 'web' }), 400, 'reauthentication is disabled');
      expect((await h.root.delete(`auth/cloud/identity-accesslist/${instance.instanceId}`)).status).to.equal(204);
      expectOk(await h.ec2Login(instance, { role: 'web' }));
    });

    it('with disallow_reauthentication, allows one login per instance until its entry is deleted', async () => {
      await h.writeRole('once', { auth_type: 'ec2', bound_ami_id: AMI, disallow_reauthentication: true });
      const instance = newInstance();
      const first = expectOk(await h.ec2Login(instance, { role: 'once' }));
      expect(first.metadata).not.to.have.property('nonce');
      expect((await entryOf(instance)).body.data).to.include({ client_nonce: '', disallow_reauthentication: true });
      expectError(await h.ec2Login(instance, { role: 'once' }), 400, 'reauthentication is disabled');
      expectError(await h.ec2Login(instance, { role: 'once', nonce: 'anything' }), 400, 'reauthentication is disabled');
      // Sticky: turning the role's flag off does not reopen the instance; deleting the entry does.
      await h.writeRole('once', { disallow_reauthentication: false });
      expectError(await h.ec2Login(instance, { role: 'once' }), 400, 'reauthentication is disabled');
      await h.root.delete(`auth/cloud/identity-accesslist/${instance.instanceId}`);
      expectOk(await h.ec2Login(instance, { role: 'once' }));
    });

    it('with allow_instance_migration, accepts another nonce only with a newer pendingTime, and hands out a new one', async () => {
      await h.writeRole('mobile', { auth_type: 'ec2', bound_ami_id: AMI, allow_instance_migration: true });
      const instance = newInstance({ launchTime: new Date('2025-01-01T00:00:00Z') });
      const first = expectOk(await h.ec2Login(instance, { role: 'mobile' }));
      expectError(await h.ec2Login(instance, { role: 'mobile', nonce: 'lost-it' }), 400, 'client nonce mismatch and instance meta-data incorrect');

      instance.launchTime = new Date('2025-02-01T00:00:00Z');
      const migrated = expectOk(await h.ec2Login(instance, { role: 'mobile' }));
      expect(migrated.metadata.nonce).to.match(UUID).and.not.equal(first.metadata.nonce);
      expect((await entryOf(instance)).body.data).to.include({ client_nonce: migrated.metadata.nonce, pending_time: '2025-02-01T00:00:00Z' });
      expectError(await h.ec2Login(instance, { role: 'mobile', nonce: first.metadata.nonce }), 400, 'client nonce mismatch and instance meta-data incorrect');
      expectOk(await h.ec2Login(instance, { role: 'mobile', nonce: migrated.metadata.nonce }));

      instance.launchTime = new Date('2025-03-01T00:00:00Z');
      expectOk(await h.ec2Login(instance, { role: 'mobile', nonce: 'chosen-after-move' }));
      expect((await entryOf(instance)).body.data.client_nonce).to.equal('chosen-after-move');
    });

    it('refuses a document older than the one of the last login, even with the right nonce', async () => {
      const instance = newInstance({ launchTime: new Date('2025-05-01T00:00:00Z') });
      const { nonce } = expectOk(await h.ec2Login(instance, { role: 'web' })).metadata;
      instance.launchTime = new Date('2025-04-01T00:00:00Z');
      expectError(await h.ec2Login(instance, { role: 'web', nonce }), 400, 'instance meta-data is older than the one used for previous login');
    });

    it('reads, lists and deletes entries under the current and the deprecated names', async () => {
      const instance = newInstance();
      expectOk(await h.ec2Login(instance, { role: 'web' }));
      for (const name of ['identity-accesslist', 'identity-whitelist']) {
        const read = await h.root.get(`auth/cloud/${name}/${instance.instanceId}`);
        expect(read.status, name).to.equal(200);
        expect(Object.keys(read.body.data).sort()).to.deep.equal(['client_nonce', 'creation_time', 'disallow_reauthentication', 'expiration_time', 'last_updated_time', 'pending_time', 'role']);
        expect((await h.root.list(`auth/cloud/${name}`)).body.data.keys).to.include(instance.instanceId);
      }
      expect((await h.root.delete(`auth/cloud/identity-whitelist/${instance.instanceId}`)).status).to.equal(204);
      expect((await entryOf(instance)).status).to.equal(404);
      expect((await h.root.delete(`auth/cloud/identity-accesslist/${instance.instanceId}`)).status).to.equal(204);
      expect((await h.anon.get(`auth/cloud/identity-accesslist/${instance.instanceId}`)).status).to.equal(403);
    });
  });

  it('keeps ec2 logins apart from forge-made certificates in config/certificate of the wrong type', async () => {
    // The rsa2048 test certificate is registered as pkcs7: it must not verify an identity signature.
    const instance = newInstance();
    const document = identityDocument(instance);
    const signature = forge.util.encode64(
      forge.pki.privateKeyFromPem(testSigners().rsa2048.privateKeyPem).sign(forge.md.sha256.create().update(document, 'utf8')),
    );
    const res = await h.anon.post('auth/cloud/login', { role: 'web', identity: Buffer.from(document).toString('base64'), signature });
    expectError(res, 400, 'instance identity verification using SHA256 RSA signature is unsuccessful');
  });
  describe('on storage with real I/O', () => {
    let lh: CloudHarness;
    let dir: { path: string; remove: () => Promise<void> };
    before(async () => {
      dir = await tempDir('keywarden-ec2-');
      lh = await startCloudHarness({ leveldbPath: dir.path });
      await lh.configure();
      await lh.registerTestCertificates();
      await lh.writeRole('web', { auth_type: 'ec2', bound_ami_id: AMI });
    });
    after(async () => {
      await lh.close();
      await dir.remove();
    });

    /** Holds the provider's DescribeInstances answers until `count` have come in, then lets them all go at once. */
    const together = async <T>(count: number, run: () => Promise<T>): Promise<T> => {
      let waiting = 0;
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      lh.fake.gate = async (_req, body) => {
        if (!body.toString().includes('Action=DescribeInstances')) return;
        if (++waiting === count) release();
        await released;
      };
      try {
        return await run();
      } finally {
        lh.fake.gate = undefined;
      }
    };

    it('never loses an update when one instance logs in many times at once', async () => {
      const instance = lh.world.addInstance({ accountId: MAIN_ACCOUNT, region, imageId: AMI });
      const entry = async () => (await lh.root.get(`auth/cloud/identity-accesslist/${instance.instanceId}`)).body.data;
      const bodies = Array.from({ length: 8 }, (_, i) => ec2LoginBody(instance, { role: 'web', nonce: `racer-${i}` }));
      const results = await together(8, () => Promise.all(bodies.map((body) => lh.anon.post('auth/cloud/login', body))));
      const winners = results.map((res, i) => (res.status === 200 ? i : -1)).filter((i) => i >= 0);
      expect(winners, results.map((r) => r.text).join('\n')).to.have.length(1);
      for (const res of results) if (res.status !== 200) expectError(res, 400, 'client nonce mismatch');
      const nonce = `racer-${winners[0]}`;
      expect((await entry()).client_nonce).to.equal(nonce);

      const again = await together(8, () => Promise.all(Array.from({ length: 8 }, () => lh.ec2Login(instance, { role: 'web', nonce }))));
      for (const res of again) expectOk(res);
      expect((await entry()).client_nonce).to.equal(nonce);
    });
  });
});
