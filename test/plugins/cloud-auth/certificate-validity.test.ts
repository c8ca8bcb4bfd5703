/**
 * ec2 login over HTTP with registered certificates whose validity ends: the signer's own signing
 * time is not enough, the certificate must be valid by the server's clock at login, for at most a
 * day (the rollover grace) past its notAfter.
 */
import { expect } from 'chai';
import { startCloudHarness, MAIN_ACCOUNT, type CloudHarness } from './harness.js';
import { ManualClock } from '../../helpers/server.js';
import type { TestResponse } from '../../helpers/http.js';
import type { Instance } from '../../fixtures/cloud/world.js';
import { makeSigner, type TestSigner } from '../../fixtures/cloud/documents.js';

const HOUR_MS = 3600 * 1000;

describe('cloud auth certificate validity at login', () => {
  const clock = new ManualClock();
  const region = 'us-east-1';
  const AMI = 'ami-0c0c0c0c0c0c0c0c0';
  /** Expired years ago; a signing time inside 2021 still falls within its validity. */
  const expired = makeSigner('expired signer', { notBefore: new Date('2021-01-01T00:00:00Z'), notAfter: new Date('2022-01-01T00:00:00Z') });
  const backDated = new Date('2021-06-01T00:00:00Z');
  /** Valid now, expiring in an hour (a provider certificate about to be rolled over). */
  const rolloverEnd = new Date(clock.now().getTime() + HOUR_MS);
  const rolling = makeSigner('rolling signer', { notBefore: new Date(clock.now().getTime() - 30 * 24 * HOUR_MS), notAfter: rolloverEnd });
  let h: CloudHarness;

  const newInstance = (): Instance => h.world.addInstance({ accountId: MAIN_ACCOUNT, region, imageId: AMI });
  const register = async (name: string, signer: TestSigner, type: 'pkcs7' | 'identity') => {
    const res = await h.root.post(`auth/cloud/config/certificate/${name}`, { cloud_public_cert: signer.certificatePem, type });
    expect(res.status, res.text).to.equal(204);
  };
  const expectRefused = async (instance: Instance, res: TestResponse, message: RegExp) => {
    expect(res.status, res.text).to.equal(400);
    expect(res.body.errors[0]).to.match(message);
    expect((await h.root.get(`auth/cloud/identity-accesslist/${instance.instanceId}`)).status).to.equal(404);
  };
  const expectLoggedIn = (res: TestResponse) => {
    expect(res.status, res.text).to.equal(200);
    expect(res.body.auth.metadata).to.include({ role: 'web', auth_type: 'ec2' });
  };
  const expiredMessage = (name: string) => new RegExp(`the signer's certificate \\(config/certificate/${name}\\) expired at 2022-01-01T00:00:00.000Z, more than 24h`);

  before(async () => {
    h = await startCloudHarness({ clock });
    await h.configure();
    await h.registerTestCertificates();
    await register('expired-pkcs7', expired, 'pkcs7');
    await register('expired-identity', expired, 'identity');
    await register('rolling', rolling, 'pkcs7');
    await h.writeRole('web', { auth_type: 'ec2', bound_ami_id: AMI });
  });
  after(() => h.close());

  it('refuses an expired certificate whose signing time is back-dated into its validity', async () => {
    const instance = newInstance();
    const res = await h.ec2Login(instance, { role: 'web', signer: expired, signingTime: backDated });
    await expectRefused(instance, res, new RegExp(`^failed to verify the signature: ${expiredMessage('expired-pkcs7').source}`));
  });

  it('refuses a document without a signing time signed by an expired certificate, as PKCS#7 or as an RSA signature', async () => {
    const timeless = newInstance();
    await expectRefused(timeless, await h.ec2Login(timeless, { role: 'web', signer: expired, signingTime: null }), new RegExp(`^failed to verify the signature: ${expiredMessage('expired-pkcs7').source}`));
    const plain = newInstance();
    await expectRefused(plain, await h.ec2Login(plain, { role: 'web', style: 'identity', signer: expired }), new RegExp(`^${expiredMessage('expired-identity').source}`));
  });

  it('still logs in with currently valid certificates, in all three proofs', async () => {
    for (const style of ['rsa2048', 'pkcs7', 'identity'] as const) expectLoggedIn(await h.ec2Login(newInstance(), { role: 'web', style }));
    expectLoggedIn(await h.ec2Login(newInstance(), { role: 'web', signer: rolling }));
  });

  it('accepts a certificate for 24h past its notAfter (provider rollover), and refuses it after that', async () => {
    const signedBeforeExpiry = { role: 'web', signer: rolling, signingTime: new Date(rolloverEnd.getTime() - 10 * 60 * 1000) };
    clock.advance(24 * 3600);
    expect(clock.now().getTime()).to.be.within(rolloverEnd.getTime() + 23 * HOUR_MS, rolloverEnd.getTime() + 24 * HOUR_MS);
    expectLoggedIn(await h.ec2Login(newInstance(), signedBeforeExpiry));
    clock.advance(2 * 3600);
    const late = newInstance();
    await expectRefused(late, await h.ec2Login(late, signedBeforeExpiry), /^failed to verify the signature: the signer's certificate \(config\/certificate\/rolling\) expired at .*, more than 24h/);
  });
});
