/**
 * The ec2-login scenario of the concurrency suite, run once the cloud method serves ec2 login and
 * its identity access list (issue 8): a PKCS#7-signed identity document from a certificate made
 * here and registered through `config/certificate`, a stand-in EC2 endpoint that describes the
 * instance as running, and many logins of that one instance at once. Only Vault's documented API
 * is used, so it needs nothing from the plugin's own test fixtures.
 */
import { expect } from 'chai';
import forge from 'node-forge';
import { selfSignedCertificate } from './certs.js';
import { startCanary } from './canary.js';
import type { ReliabilityServer } from './server.js';

const INSTANCE = { id: 'i-0reliability000001', ami: 'ami-0reliability01', account: '123456789012', region: 'us-east-1', pendingTime: '2024-01-01T00:00:00Z' };

function identityDocument(): string {
  return JSON.stringify({
    accountId: INSTANCE.account,
    architecture: 'x86_64',
    availabilityZone: `${INSTANCE.region}a`,
    billingProducts: null,
    devpayProductCodes: null,
    marketplaceProductCodes: null,
    imageId: INSTANCE.ami,
    instanceId: INSTANCE.id,
    instanceType: 't3.micro',
    kernelId: null,
    pendingTime: INSTANCE.pendingTime,
    privateIp: '10.0.0.10',
    ramdiskId: null,
    region: INSTANCE.region,
    version: '2017-09-30',
  });
}

/** The document signed as instance metadata serves it: base64 DER of a PKCS#7 SignedData, no newlines. */
function pkcs7Of(document: string, signer: { certPem: string; keyPem: string }): string {
  const p7 = forge.pkcs7.createSignedData();
  p7.content = forge.util.createBuffer(document, 'utf8');
  const cert = forge.pki.certificateFromPem(signer.certPem);
  p7.addCertificate(cert);
  p7.addSigner({
    key: forge.pki.privateKeyFromPem(signer.keyPem),
    certificate: cert,
    digestAlgorithm: forge.pki.oids.sha256!,
    authenticatedAttributes: [
      { type: forge.pki.oids.contentType!, value: forge.pki.oids.data },
      { type: forge.pki.oids.messageDigest! },
      { type: forge.pki.oids.signingTime!, value: new Date() as unknown as string },
    ],
  });
  p7.sign();
  return forge.util.encode64(forge.asn1.toDer(p7.toAsn1()).getBytes());
}

const describeInstances = () => `<?xml version="1.0" encoding="UTF-8"?>
<DescribeInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>00000000-0000-0000-0000-000000000002</requestId>
<reservationSet><item><reservationId>r-0reliability</reservationId><ownerId>${INSTANCE.account}</ownerId><groupSet/>
<instancesSet><item><instanceId>${INSTANCE.id}</instanceId><imageId>${INSTANCE.ami}</imageId>
<instanceState><code>16</code><name>running</name></instanceState><instanceType>t3.micro</instanceType>
<launchTime>${INSTANCE.pendingTime}</launchTime><placement><availabilityZone>${INSTANCE.region}a</availabilityZone></placement>
<subnetId>subnet-0reliability</subnetId><vpcId>vpc-0reliability</vpcId><privateIpAddress>10.0.0.10</privateIpAddress>
<tagSet/></item></instancesSet></item></reservationSet></DescribeInstancesResponse>`;

const callerIdentity = () => `<?xml version="1.0" encoding="UTF-8"?>
<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>
<Arn>arn:aws:iam::${INSTANCE.account}:user/keywarden-server</Arn><UserId>AIDARELIABILITY0000001</UserId><Account>${INSTANCE.account}</Account>
</GetCallerIdentityResult><ResponseMetadata><RequestId>00000000-0000-0000-0000-000000000003</RequestId></ResponseMetadata></GetCallerIdentityResponse>`;

export async function runConcurrentEc2Logins(server: ReliabilityServer): Promise<void> {
  const api = server.api;
  const signer = selfSignedCertificate('reliability-ec2-signer', 'signer');
  const ec2 = await startCanary('sts-error');
  // One stand-in for every provider API: the server asks STS who its own credentials belong to
  // (to pick the account's STS role, if any) before it asks EC2 about the instance.
  ec2.responder = (req) => ({
    status: 200,
    contentType: 'text/xml',
    body: req.body.includes('Action=GetCallerIdentity') ? callerIdentity() : describeInstances(),
  });
  try {
    await api.expect('POST', 'auth/cloud/config/client', { access_key: 'AKIARELIABILITY', secret_key: 'reliability-secret', endpoint: ec2.url, iam_endpoint: ec2.url, sts_endpoint: ec2.url, max_retries: 0 });
    await api.expect('POST', 'auth/cloud/config/certificate/reliability', { cloud_public_cert: signer.certPem, type: 'pkcs7' });
    await api.expect('POST', 'auth/cloud/role/ec2-race', { auth_type: 'ec2', bound_ami_id: [INSTANCE.ami], token_ttl: '1h', token_max_ttl: '2h' });
    const pkcs7 = pkcs7Of(identityDocument(), signer);
    const nonce = 'reliability-nonce-0001';
    const answers = await Promise.all(Array.from({ length: 12 }, () => api.request('POST', 'auth/cloud/login', { role: 'ec2-race', pkcs7, nonce }, '')));
    for (const res of answers) expect(res.status, res.text).to.be.below(500);
    const succeeded = answers.filter((r) => r.status === 200);
    expect(succeeded.length, answers.map((r) => `${r.status} ${r.text.slice(0, 120)}`).join('\n')).to.be.greaterThan(0);
    // One entry for the instance, holding the nonce every login used.
    const entry = await api.expect('GET', `auth/cloud/identity-accesslist/${INSTANCE.id}`, undefined, [200]);
    if (entry.json.data.client_nonce !== undefined) expect(entry.json.data.client_nonce).to.equal(nonce);
    const listed = await api.expect('LIST', 'auth/cloud/identity-accesslist', undefined, [200]);
    expect(listed.json.data.keys).to.deep.equal([INSTANCE.id]);
    // The entry was not lost: another nonce for the same instance is refused.
    const impostor = await api.request('POST', 'auth/cloud/login', { role: 'ec2-race', pkcs7, nonce: 'another-nonce-0002' }, '');
    expect(impostor.status, impostor.text).to.be.within(400, 499);
    // Every issued token is live and carries the instance.
    for (const res of succeeded) {
      const lookup = await api.request('GET', 'auth/token/lookup-self', undefined, res.json.auth.client_token as string);
      expect(lookup.status).to.equal(200);
    }
  } finally {
    await ec2.close();
  }
}
