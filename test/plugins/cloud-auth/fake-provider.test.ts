/** The fake cloud provider: it must accept what the real SDK sends and refuse what AWS would refuse. */
import { expect } from 'chai';
import { createVerify, X509Certificate } from 'node:crypto';
import http from 'node:http';
import forge from 'node-forge';
import { GetCallerIdentityCommand, AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { IAMClient, GetUserCommand, GetRoleCommand, CreateAccessKeyCommand } from '@aws-sdk/client-iam';
import { EC2Client, DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { SignatureV4 } from '@smithy/signature-v4';
import { Hash } from '@smithy/hash-node';
import { FakeCloud } from '../../fixtures/cloud/server.js';
import { World, signing, type AccessKey } from '../../fixtures/cloud/world.js';
import { verifySigV4 } from '../../fixtures/cloud/sigv4.js';
import { testSigners } from '../../fixtures/cloud/documents.js';

const ACCOUNT = '111122223333';

function raw(url: string, method: string, headers: Record<string, string>, body = ''): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('fake cloud provider', () => {
  const world = new World();
  const fake = new FakeCloud(world);
  const alice = world.addUser(ACCOUNT, 'alice', { path: '/team/' });
  let aliceKey: AccessKey;
  const sdk = <T>(Client: new (config: object) => T, key: AccessKey, region = 'us-east-1'): T =>
    new Client({ region, endpoint: fake.url, credentials: signing(key), maxAttempts: 1 });

  before(async () => {
    await fake.start();
    aliceKey = world.keyFor(alice);
  });
  after(() => fake.close());

  it('answers GetCallerIdentity to the SDK with the caller of the signing key', async () => {
    const out = await sdk(STSClient, aliceKey).send(new GetCallerIdentityCommand({}));
    expect(out).to.include({ Arn: alice.arn, UserId: alice.userId, Account: ACCOUNT });
  });

  it('refuses a key signed with the wrong secret with the provider\'s SignatureDoesNotMatch document', async () => {
    const forged = { ...aliceKey, secretAccessKey: 'not-the-secret' };
    const err = await sdk(STSClient, forged).send(new GetCallerIdentityCommand({})).catch((e: Error) => e);
    expect(err).to.have.property('name', 'SignatureDoesNotMatch');
    expect((err as Error).message).to.contain('does not match the signature you provided');
  });

  it('refuses an unknown access key and a missing session token', async () => {
    const unknown = { ...aliceKey, accessKeyId: 'AKIAUNKNOWNUNKNOWN00' };
    expect(await sdk(STSClient, unknown).send(new GetCallerIdentityCommand({})).catch((e: Error) => e.name)).to.equal('InvalidClientTokenId');
    const session = world.sessionFor(world.addRole(ACCOUNT, 'worker'), 'job-1');
    const withoutToken = { accessKeyId: session.accessKeyId, secretAccessKey: session.secretAccessKey };
    const client = new STSClient({ region: 'us-east-1', endpoint: fake.url, credentials: withoutToken, maxAttempts: 1 });
    expect(await client.send(new GetCallerIdentityCommand({})).catch((e: Error) => e.name)).to.equal('InvalidClientTokenId');
  });

  it('refuses a credential scope outside the regions of its STS endpoint', async () => {
    const err = await sdk(STSClient, aliceKey, 'eu-west-1').send(new GetCallerIdentityCommand({})).catch((e: Error) => e);
    expect((err as Error).message).to.contain("Credential should be scoped to a valid region, not 'eu-west-1'");
  });

  it('verifies a body byte changed after signing as a signature mismatch', async () => {
    const signer = new SignatureV4({ service: 'sts', region: 'us-east-1', credentials: signing(aliceKey), sha256: Hash.bind(null, 'sha256') });
    const url = new URL(fake.url);
    const body = 'Action=GetCallerIdentity&Version=2011-06-15';
    const signed = await signer.sign({
      method: 'POST', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: '/', query: {},
      headers: { host: url.host, 'content-type': 'application/x-www-form-urlencoded' }, body,
    });
    expect((await raw(fake.url, 'POST', signed.headers, body)).status).to.equal(200);
    const tampered = await raw(fake.url, 'POST', signed.headers, body.replace('2011', '2012'));
    expect(tampered.status).to.be.oneOf([400, 403]);
    expect(tampered.text).to.match(/<Code>SignatureDoesNotMatch<\/Code>/).and.match(/^<ErrorResponse xmlns="https:\/\/sts.amazonaws.com/);
  });

  it('accepts a presigned GET and refuses it once the Host differs from the signed one', async () => {
    const signer = new SignatureV4({ service: 'sts', region: 'us-east-1', credentials: signing(aliceKey), sha256: Hash.bind(null, 'sha256') });
    const presigned = await signer.presign(
      { method: 'GET', protocol: 'https:', hostname: 'sts.amazonaws.com', path: '/', query: { Action: 'GetCallerIdentity', Version: '2011-06-15' }, headers: { host: 'sts.amazonaws.com' } },
      { expiresIn: 60 },
    );
    const query = new URLSearchParams(presigned.query as Record<string, string>).toString().replace(/\+/g, '%20');
    const ok = await raw(`${fake.url}/?${query}`, 'GET', { host: 'sts.amazonaws.com' });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.text).to.contain(`<Arn>${alice.arn}</Arn>`);
    expect((await raw(`${fake.url}/?${query}`, 'GET', { host: 'elsewhere.example' })).status).to.equal(403);
  });

  it('checks signatures independently: a request signed at another time is refused as expired', () => {
    const result = verifySigV4(
      {
        method: 'POST', path: '/', query: '', body: Buffer.alloc(0),
        headers: { host: 'h', 'x-amz-date': '20200101T000000Z', authorization: `AWS4-HMAC-SHA256 Credential=${aliceKey.accessKeyId}/20200101/us-east-1/sts/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(64)}` },
      },
      () => ({ secretAccessKey: aliceKey.secretAccessKey }),
      new Date(),
    );
    expect(result).to.include({ ok: false, code: 'SignatureDoesNotMatch' });
    expect((result as { message: string }).message).to.contain('Signature expired');
  });

  it('serves IAM users and roles of the caller\'s account, with paths and unique IDs', async () => {
    const role = world.addRole(ACCOUNT, 'deployer', { path: '/ci/' });
    const iam = sdk(IAMClient, aliceKey);
    expect((await iam.send(new GetUserCommand({ UserName: 'alice' }))).User).to.include({ Arn: alice.arn, UserId: alice.userId, Path: '/team/' });
    expect((await iam.send(new GetUserCommand({}))).User?.UserName).to.equal('alice');
    expect((await iam.send(new GetRoleCommand({ RoleName: 'deployer' }))).Role).to.include({ Arn: role.arn, RoleId: role.roleId });
    expect(await iam.send(new GetUserCommand({ UserName: 'nobody' })).catch((e: { Code?: string }) => e.Code)).to.equal('NoSuchEntity');
  });

  it('refuses a third access key with LimitExceeded', async () => {
    const bob = world.addUser(ACCOUNT, 'bob');
    const iam = sdk(IAMClient, world.keyFor(bob));
    expect((await iam.send(new CreateAccessKeyCommand({ UserName: 'bob' }))).AccessKey?.AccessKeyId).to.match(/^AKIA/);
    const err = await iam.send(new CreateAccessKeyCommand({ UserName: 'bob' })).catch((e: Error) => e);
    expect(err).to.have.property('Code', 'LimitExceeded');
    expect((err as Error).message).to.equal('Cannot exceed quota for AccessKeysPerUser: 2');
  });

  it('describes instances of the caller\'s account and region only, with EC2 error codes', async () => {
    const instance = world.addInstance({ accountId: ACCOUNT, region: 'us-west-2', tags: { team: 'a' } });
    const out = await sdk(EC2Client, aliceKey, 'us-west-2').send(new DescribeInstancesCommand({ InstanceIds: [instance.instanceId] }));
    const described = out.Reservations?.[0]?.Instances?.[0];
    expect(described).to.include({ InstanceId: instance.instanceId, ImageId: instance.imageId, VpcId: instance.vpcId, SubnetId: instance.subnetId });
    expect(described?.State?.Name).to.equal('running');
    expect(described?.Tags).to.deep.equal([{ Key: 'team', Value: 'a' }]);
    const elsewhere = await sdk(EC2Client, aliceKey, 'us-east-1').send(new DescribeInstancesCommand({ InstanceIds: [instance.instanceId] })).catch((e: Error) => e.name);
    expect(elsewhere).to.equal('InvalidInstanceID.NotFound');
    const malformed = await sdk(EC2Client, aliceKey, 'us-west-2').send(new DescribeInstancesCommand({ InstanceIds: ['nope'] })).catch((e: Error) => e.name);
    expect(malformed).to.equal('InvalidInstanceID.Malformed');
  });

  it('assumes a role only for principals its trust names', async () => {
    const satellite = world.addRole('444455556666', 'reader', { trust: [alice.arn] });
    const out = await sdk(STSClient, aliceKey).send(new AssumeRoleCommand({ RoleArn: satellite.arn, RoleSessionName: 's1' }));
    expect(out.AssumedRoleUser?.Arn).to.equal('arn:aws:sts::444455556666:assumed-role/reader/s1');
    const other = world.keyFor(world.addUser(ACCOUNT, 'mallory'));
    const denied = await sdk(STSClient, other).send(new AssumeRoleCommand({ RoleArn: satellite.arn, RoleSessionName: 's2' })).catch((e: Error) => e);
    expect(denied).to.have.property('name', 'AccessDenied');
  });

  it('serves IMDSv2 credentials and identity documents signed with its test certificates', async () => {
    world.addRole(ACCOUNT, 'web');
    world.addInstanceProfile(ACCOUNT, 'web-profile', ['web']);
    const instance = world.addInstance({ accountId: ACCOUNT, region: 'us-east-1', profileName: 'web-profile' });
    world.metadataInstanceId = instance.instanceId;
    expect((await raw(`${fake.url}/latest/meta-data/iam/security-credentials/`, 'GET', {})).status).to.equal(401);
    const token = (await raw(`${fake.url}/latest/api/token`, 'PUT', { 'x-aws-ec2-metadata-token-ttl-seconds': '60' })).text;
    const get = (path: string) => raw(`${fake.url}${path}`, 'GET', { 'x-aws-ec2-metadata-token': token });
    expect((await get('/latest/meta-data/iam/security-credentials/')).text).to.equal('web');
    const creds = JSON.parse((await get('/latest/meta-data/iam/security-credentials/web')).text);
    expect(creds).to.include({ Code: 'Success', Type: 'AWS-HMAC' });
    const asInstance = new STSClient({ region: 'us-east-1', endpoint: fake.url, credentials: { accessKeyId: creds.AccessKeyId, secretAccessKey: creds.SecretAccessKey, sessionToken: creds.Token } });
    expect((await asInstance.send(new GetCallerIdentityCommand({}))).Arn).to.equal(`arn:aws:sts::${ACCOUNT}:assumed-role/web/${instance.instanceId}`);

    const documentAnswer = await get('/latest/dynamic/instance-identity/document');
    expect(documentAnswer.status, documentAnswer.text).to.equal(200);
    const document = documentAnswer.text;
    expect(JSON.parse(document)).to.include({ instanceId: instance.instanceId, accountId: ACCOUNT, region: 'us-east-1', imageId: instance.imageId });
    const signature = Buffer.from((await get('/latest/dynamic/instance-identity/signature')).text.replace(/\n/g, ''), 'base64');
    const signers = testSigners();
    expect(createVerify('sha256').update(document).verify(new X509Certificate(signers.identity.certificatePem).publicKey, signature)).to.equal(true);
    for (const [path, signer] of [['pkcs7', signers.pkcs7], ['rsa2048', signers.rsa2048]] as const) {
      const der = forge.util.decode64((await get(`/latest/dynamic/instance-identity/${path}`)).text.replace(/\n/g, ''));
      const p7 = forge.pkcs7.messageFromAsn1(forge.asn1.fromDer(der)) as forge.pkcs7.PkcsSignedData & { rawCapture: { serial: string } };
      expect(der).to.contain(document);
      expect(p7.certificates).to.have.length(0);
      expect(forge.util.bytesToHex(p7.rawCapture.serial)).to.equal(forge.pki.certificateFromPem(signer.certificatePem).serialNumber);
    }
  });
});
