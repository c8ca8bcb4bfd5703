/**
 * ec2 login over HTTP with the real provider-signed documents of test/fixtures/cloud/vectors, verified
 * against the built-in certificates only (nothing registered), with the fake provider playing the
 * instances they describe. SHA-1 (the DSA pkcs7 documents) only with the server config flag.
 */
import { expect } from 'chai';
import { startCloudHarness, type CloudHarness } from './harness.js';
import { VECTORS, identityVector, pkcs7Vector } from './vectors.js';

/** The instances of the vectors: account, region, AMI, pendingTime as their documents say. */
const RSA2048_INSTANCE = { instanceId: 'i-0c5541936caf78c12', accountId: '189292791360', region: 'ap-southeast-2', imageId: 'ami-0cbde744623b7506b', launchTime: new Date('2026-02-16T00:38:27Z') };
const DSA_INSTANCE = { instanceId: 'i-f79fe56c', accountId: '121659014334', region: 'us-east-1', imageId: 'ami-fce3c696', launchTime: new Date('2016-04-08T03:01:38Z') };

/** A harness whose provider knows the vectors' instances, reached through an STS role in each of their accounts. */
async function vectorHarness(allowSha1Signatures?: boolean): Promise<CloudHarness> {
  const h = await startCloudHarness(allowSha1Signatures === undefined ? {} : { allowSha1Signatures });
  await h.configure();
  for (const instance of [RSA2048_INSTANCE, DSA_INSTANCE]) {
    h.world.addInstance(instance);
    h.world.addRole(instance.accountId, 'keywarden-reader', { trust: [h.serviceUser.arn] });
    await h.root.post(`auth/cloud/config/sts/${instance.accountId}`, { sts_role: `arn:aws:iam::${instance.accountId}:role/keywarden-reader` });
    await h.writeRole(`vector-${instance.accountId}`, { auth_type: 'ec2', bound_account_id: instance.accountId, bound_ami_id: instance.imageId });
  }
  return h;
}

describe('cloud auth ec2 login with the real vectors', () => {
  describe('with the default configuration', () => {
    let h: CloudHarness;
    before(async () => {
      h = await vectorHarness();
    });
    after(() => h.close());

    it('logs in with the rsa2048 document, then again with identity + signature and the nonce', async () => {
      const role = `vector-${RSA2048_INSTANCE.accountId}`;
      const first = await h.anon.post('auth/cloud/login', { role, pkcs7: pkcs7Vector(VECTORS.rsa2048) });
      expect(first.status, first.text).to.equal(200);
      expect(first.body.auth.metadata).to.include({ account_id: RSA2048_INSTANCE.accountId, auth_type: 'ec2', role });
      const { document, signature } = identityVector(VECTORS.identity[0]);
      const again = await h.anon.post('auth/cloud/login', { role, identity: document.toString('base64'), signature, nonce: first.body.auth.metadata.nonce });
      expect(again.status, again.text).to.equal(200);
      const entry = await h.root.get(`auth/cloud/identity-accesslist/${RSA2048_INSTANCE.instanceId}`);
      expect(entry.body.data).to.include({ pending_time: '2026-02-16T00:38:27Z', client_nonce: first.body.auth.metadata.nonce });
    });

    it('refuses the rsa2048 document with one bit changed, and writes nothing', async () => {
      await h.root.delete(`auth/cloud/identity-accesslist/${RSA2048_INSTANCE.instanceId}`);
      const der = Buffer.from(pkcs7Vector(VECTORS.rsa2048), 'base64');
      der[der.indexOf(Buffer.from('"region"')) + 2]! ^= 0x01;
      const res = await h.anon.post('auth/cloud/login', { role: `vector-${RSA2048_INSTANCE.accountId}`, pkcs7: der.toString('base64') });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.errors).to.deep.equal(['failed to verify the signature: the message digest does not match the content: the document was altered']);
      expect((await h.root.get(`auth/cloud/identity-accesslist/${RSA2048_INSTANCE.instanceId}`)).status).to.equal(404);
    });

    it('refuses the DSA-SHA1 pkcs7 document with a message that says how to allow it', async () => {
      const res = await h.anon.post('auth/cloud/login', { role: `vector-${DSA_INSTANCE.accountId}`, pkcs7: pkcs7Vector(VECTORS.dsa[0]) });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.errors[0]).to.equal(
        'failed to verify the signature: the signature uses SHA-1 (dsaWithSHA1), which this server does not accept; send the rsa2048 document instead, ' +
          'or have the operator set cloud_auth.allow_sha1_signatures in the server configuration',
      );
      expect((await h.root.get(`auth/cloud/identity-accesslist/${DSA_INSTANCE.instanceId}`)).status).to.equal(404);
    });
  });

  describe('with cloud_auth.allow_sha1_signatures', () => {
    it('logs in with the DSA-SHA1 pkcs7 document when true, and refuses it when false', async () => {
      const on = await vectorHarness(true);
      try {
        const res = await on.anon.post('auth/cloud/login', { role: `vector-${DSA_INSTANCE.accountId}`, pkcs7: pkcs7Vector(VECTORS.dsa[0]) });
        expect(res.status, res.text).to.equal(200);
        expect(res.body.auth.metadata).to.include({ account_id: DSA_INSTANCE.accountId, auth_type: 'ec2' });
        const rsa = await on.anon.post('auth/cloud/login', { role: `vector-${RSA2048_INSTANCE.accountId}`, pkcs7: pkcs7Vector(VECTORS.rsa2048) });
        expect(rsa.status, rsa.text).to.equal(200);
      } finally {
        await on.close();
      }
      const off = await vectorHarness(false);
      try {
        const res = await off.anon.post('auth/cloud/login', { role: `vector-${DSA_INSTANCE.accountId}`, pkcs7: pkcs7Vector(VECTORS.dsa[0]) });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.errors[0]).to.match(/uses SHA-1/);
      } finally {
        await off.close();
      }
    });
  });
});
