/**
 * iam login over HTTP: requests signed by the AWS SDK's own SigV4 signer, forwarded by the server
 * to the fake provider it is configured with, and every rule and error row of the login.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startCloudHarness, MAIN_ACCOUNT, SATELLITE_ACCOUNT, type CloudHarness } from './harness.js';
import { signedLogin, GET_CALLER_IDENTITY_BODY } from '../../fixtures/cloud/sign.js';
import { signing, type AccessKey, type User } from '../../fixtures/cloud/world.js';
import { TestClient, type TestResponse } from '../../helpers/http.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('cloud auth iam login', () => {
  let h: CloudHarness;
  let alice: User;
  let aliceKey: AccessKey;

  const expectError = (res: TestResponse, status: number, message: string | RegExp) => {
    expect(res.status, res.text).to.equal(status);
    if (typeof message === 'string') expect(res.body.errors[0]).to.equal(message);
    else expect(res.body.errors[0]).to.match(message);
  };
  const lookupSelf = async (res: TestResponse) => (await new TestClient(h.server.address, res.body.auth.client_token).get('auth/token/lookup-self')).body.data;

  before(async () => {
    h = await startCloudHarness();
    await h.configure();
    alice = h.world.addUser(MAIN_ACCOUNT, 'alice');
    aliceKey = h.world.keyFor(alice);
    await h.root.put('sys/policy/reader', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    expect((await h.writeRole('alice', { bound_iam_principal_arn: alice.arn, token_policies: 'reader', token_ttl: '30m' })).status).to.equal(204);
  });
  after(() => h.close());
  afterEach(async () => {
    h.fake.interceptor = undefined;
    await h.configure();
  });

  describe('signed by the SDK', () => {
    it('logs an IAM user in against the role named after it, with metadata, display name and token settings', async () => {
      const res = await h.login(aliceKey);
      expect(res.status, res.text).to.equal(200);
      const auth = res.body.auth;
      expect(auth).to.include({ lease_duration: 1800, renewable: true, token_type: 'service' });
      expect(auth.policies).to.deep.equal(['default', 'reader']);
      const role = (await h.root.get('auth/cloud/role/alice')).body.data;
      expect(auth.metadata).to.deep.equal({ role_id: role.role_id, account_id: MAIN_ACCOUNT, auth_type: 'iam' });
      expect((await lookupSelf(res)).display_name).to.equal('cloud-alice');
      const sts = h.fake.callsOf('sts', 'GetCallerIdentity').at(-1)!;
      expect(sts).to.include({ host: 'sts.amazonaws.com', accessKeyId: aliceKey.accessKeyId, error: '' });
    });

    it('logs an assumed role in, naming the token after the role and session', async () => {
      const role = h.world.addRole(MAIN_ACCOUNT, 'deployer');
      await h.writeRole('deployer', { bound_iam_principal_arn: role.arn });
      const res = await h.login(h.world.sessionFor(role, 'pipeline-42'));
      expect(res.status, res.text).to.equal(200);
      expect((await lookupSelf(res)).display_name).to.equal('cloud-deployer/pipeline-42');
    });

    it('logs in a role that has a path: by unique ID, or by the canonical ARN without unique IDs', async () => {
      const role = h.world.addRole(MAIN_ACCOUNT, 'builder', { path: '/ci/build/' });
      await h.writeRole('by-id', { bound_iam_principal_arn: role.arn });
      await h.writeRole('by-arn', { bound_iam_principal_arn: `arn:aws:iam::${MAIN_ACCOUNT}:role/builder`, resolve_cloud_unique_ids: false });
      const session = h.world.sessionFor(role, 's');
      expect((await h.login(session, { role: 'by-id' })).status).to.equal(200);
      expect((await h.login(session, { role: 'BY-ARN' })).status).to.equal(200);
    });

    it('matches a wildcard binding against the full ARN, looked up once', async () => {
      const role = h.world.addRole(MAIN_ACCOUNT, 'batch-1', { path: '/jobs/' });
      await h.writeRole('jobs', { bound_iam_principal_arn: `arn:aws:iam::${MAIN_ACCOUNT}:role/jobs/*` });
      const before = h.fake.callsOf('iam', 'GetRole').length;
      expect((await h.login(h.world.sessionFor(role, 'a'), { role: 'jobs' })).status).to.equal(200);
      expect((await h.login(h.world.sessionFor(role, 'b'), { role: 'jobs' })).status).to.equal(200);
      expect(h.fake.callsOf('iam', 'GetRole').length - before).to.equal(1);
      const outsider = h.world.addRole(MAIN_ACCOUNT, 'batch-2', { path: '/other/' });
      expectError(
        await h.login(h.world.sessionFor(outsider, 'c'), { role: 'jobs' }),
        400,
        `IAM Principal "arn:aws:sts::${MAIN_ACCOUNT}:assumed-role/batch-2/c" does not belong to the role "jobs"`,
      );
    });

    it('takes the headers as a JSON object as well as base64 JSON', async () => {
      expect((await h.login(aliceKey, { headersAsObject: true })).status).to.equal(200);
    });

    it('logs in with a presigned GET once X-Amz-Expires is allowed', async () => {
      expectError(await h.login(aliceKey, { method: 'GET' }), 400, 'invalid request query param: X-Amz-Expires');
      await h.configure({ allowed_sts_header_values: 'X-Amz-Expires' });
      const res = await h.login(aliceKey, { method: 'GET' });
      expect(res.status, res.text).to.equal(200);
      expect(h.fake.callsOf('sts', 'GetCallerIdentity').at(-1)).to.include({ error: '' });
    });

    it('refuses an unknown principal, a missing role and a role of the other auth type', async () => {
      const bob = h.world.addUser(MAIN_ACCOUNT, 'bob');
      const bobKey = h.world.keyFor(bob);
      expectError(await h.login(bobKey), 400, 'entry for role bob not found');
      expectError(await h.login(bobKey, { role: 'alice' }), 400, `IAM Principal "${bob.arn}" does not belong to the role "alice"`);
      await h.writeRole('ec2-only', { auth_type: 'ec2', bound_ami_id: 'ami-1' });
      expectError(await h.login(bobKey, { role: 'ec2-only' }), 400, 'auth method iam not allowed for role ec2-only');
    });

    it('stops logins of a principal deleted and recreated under the same name until the role is written again', async () => {
      const carol = h.world.addUser(MAIN_ACCOUNT, 'carol');
      await h.writeRole('carol', { bound_iam_principal_arn: carol.arn });
      const recreated = h.world.recreateUser(carol);
      expectError(await h.login(h.world.keyFor(recreated)), 400, `IAM Principal "${carol.arn}" does not belong to the role "carol"`);
      await h.writeRole('carol', { bound_iam_principal_arn: carol.arn });
      expect((await h.login(h.world.keyFor(recreated))).status).to.equal(200);
    });
  });

  describe('token settings and CIDRs', () => {
    it('refuses a login from outside token_bound_cidrs with 403, and binds the token to them', async () => {
      await h.writeRole('alice', { token_bound_cidrs: '10.0.0.0/8' });
      expectError(await h.login(aliceKey), 403, 'permission denied');
      await h.writeRole('alice', { token_bound_cidrs: '127.0.0.0/8' });
      const res = await h.login(aliceKey);
      expect(res.status).to.equal(200);
      expect((await lookupSelf(res)).bound_cidrs).to.deep.equal(['127.0.0.0/8']);
      await h.writeRole('alice', { token_bound_cidrs: '' });
    });

    it('applies the role\'s token type, period, uses and default-policy setting', async () => {
      await h.writeRole('tokens', { bound_iam_principal_arn: alice.arn, token_type: 'batch', token_no_default_policy: true, token_policies: 'reader' });
      const batch = await h.login(aliceKey, { role: 'tokens' });
      expect(batch.body.auth).to.include({ token_type: 'batch', renewable: false });
      expect(batch.body.auth.policies).to.deep.equal(['reader']);
      await h.writeRole('tokens', { token_type: 'service', token_period: '1h', token_num_uses: 3 });
      const periodic = await h.login(aliceKey, { role: 'tokens' });
      expect(periodic.body.auth).to.include({ token_type: 'service', lease_duration: 3600, num_uses: 3 });
    });
  });

  describe('config/identity', () => {
    it('puts the chosen metadata on the token and the alias', async () => {
      await h.root.post('auth/cloud/config/identity', { iam_metadata: 'client_arn,canonical_arn,client_user_id,inferred_entity_id' });
      try {
        const res = await h.login(aliceKey);
        const roleId = (await h.root.get('auth/cloud/role/alice')).body.data.role_id;
        expect(res.body.auth.metadata).to.deep.equal({ role_id: roleId, client_arn: alice.arn, canonical_arn: alice.arn, client_user_id: alice.userId });
        const entity = (await h.root.get(`identity/entity/id/${res.body.auth.entity_id}`)).body.data;
        expect(entity.aliases[0].metadata).to.deep.equal({ client_arn: alice.arn, canonical_arn: alice.arn, client_user_id: alice.userId });
        await h.root.post('auth/cloud/config/identity', { iam_metadata: [] });
        expect((await h.login(aliceKey)).body.auth.metadata).to.deep.equal({ role_id: roleId });
      } finally {
        await h.root.post('auth/cloud/config/identity', { iam_metadata: 'default', iam_alias: 'role_id' });
      }
    });

    it('names the alias by role_id, unique_id or full_arn', async () => {
      const dave = h.world.addUser(MAIN_ACCOUNT, 'dave');
      const erin = h.world.addUser(MAIN_ACCOUNT, 'erin');
      await h.writeRole('shared', { bound_iam_principal_arn: [dave.arn, erin.arn] });
      const aliasOf = async (key: AccessKey) => {
        const res = await h.login(key, { role: 'shared' });
        return (await h.root.get(`identity/entity/id/${res.body.auth.entity_id}`)).body.data.aliases[0].name as string;
      };
      const roleId = (await h.root.get('auth/cloud/role/shared')).body.data.role_id;
      expect(await aliasOf(h.world.keyFor(dave))).to.equal(roleId);
      expect(await aliasOf(h.world.keyFor(erin))).to.equal(roleId);
      await h.root.post('auth/cloud/config/identity', { iam_alias: 'unique_id' });
      expect(await aliasOf(h.world.keyFor(dave))).to.equal(dave.userId);
      await h.root.post('auth/cloud/config/identity', { iam_alias: 'full_arn' });
      expect(await aliasOf(h.world.keyFor(erin))).to.equal(erin.arn);
      await h.root.post('auth/cloud/config/identity', { iam_alias: 'role_id' });
    });
  });

  describe('the server-ID header', () => {
    beforeEach(() => h.configure({ iam_server_id_header_value: 'keywarden.example' }));

    it('accepts the neutral header and the one stock clients send, signed, with POST and GET', async () => {
      expect((await h.login(aliceKey, { serverId: { name: 'X-Service-Cloud-IAM-Server-ID', value: 'keywarden.example' } })).status).to.equal(200);
      expect((await h.login(aliceKey, { serverId: { name: 'X-Vault-AWS-IAM-Server-ID', value: 'keywarden.example' } })).status).to.equal(200);
      await h.configure({ iam_server_id_header_value: 'keywarden.example', allowed_sts_header_values: 'X-Amz-Expires' });
      const get = await h.login(aliceKey, { method: 'GET', serverId: { name: 'X-Service-Cloud-IAM-Server-ID', value: 'keywarden.example' } });
      expect(get.status, get.text).to.equal(200);
    });

    it('refuses a login without the header, with another value, or with the header unsigned', async () => {
      const prefix = 'error validating X-Service-Cloud-IAM-Server-ID header: ';
      expectError(await h.login(aliceKey), 400, `${prefix}missing header "X-Service-Cloud-IAM-Server-ID"`);
      expectError(
        await h.login(aliceKey, { serverId: { name: 'X-Vault-AWS-IAM-Server-ID', value: 'other.example' } }),
        400,
        `${prefix}expected "keywarden.example" but got "other.example"`,
      );
      const payload = await signedLogin({ credentials: signing(aliceKey), headersAsObject: true });
      (payload.iam_request_headers as Record<string, string[]>)['X-Service-Cloud-IAM-Server-ID'] = ['keywarden.example'];
      expectError(await h.anon.post('auth/cloud/login', payload), 400, `${prefix}server ID header wasn't signed`);
      const noAuthorization = await signedLogin({ credentials: signing(aliceKey), headersAsObject: true, serverId: { name: 'X-Service-Cloud-IAM-Server-ID', value: 'keywarden.example' } });
      delete (noAuthorization.iam_request_headers as Record<string, string[]>).authorization;
      expectError(await h.anon.post('auth/cloud/login', noAuthorization), 400, `${prefix}missing Authorization header`);
    });
  });

  describe('the X-Amz-* header allow-list', () => {
    it('refuses X-Amz-* headers outside the defaults until they are allowed', async () => {
      const options = { headers: { 'X-Amz-Target': 'AWSSecurityTokenServiceV20110615.GetCallerIdentity' } };
      expectError(await h.login(aliceKey, options), 400, 'invalid request header: X-Amz-Target');
      await h.configure({ allowed_sts_header_values: 'x-amz-target' });
      expect((await h.login(aliceKey, options)).status).to.equal(200);
    });

    it('allows the SDK\'s default X-Amz-* headers, the session token included', async () => {
      const role = h.world.addRole(MAIN_ACCOUNT, 'tokened');
      await h.writeRole('tokened', { bound_iam_principal_arn: role.arn });
      const session = h.world.sessionFor(role, 's');
      expect((await h.login(session, { headers: { 'X-Amz-User-Agent': 'aws-sdk-js/3' } })).status).to.equal(200);
    });
  });

  describe('where the request goes', () => {
    let listener: http.Server;
    let hits = 0;
    let listenerHost = '';
    before(async () => {
      listener = http.createServer((_req, res) => {
        hits++;
        res.writeHead(200, { 'Content-Type': 'text/xml' });
        res.end('<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>arn:aws:iam::999999999999:user/admin</Arn><UserId>AIDAFAKE</UserId><Account>999999999999</Account></GetCallerIdentityResult></GetCallerIdentityResponse>');
      });
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      listenerHost = `127.0.0.1:${(listener.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => listener.close(() => resolve())));

    it('sends a login whose signed URL names a local listener to the configured endpoint only', async () => {
      const res = await h.login(aliceKey, { url: `http://${listenerHost}/` });
      expect(res.status, res.text).to.equal(200);
      expect(hits).to.equal(0);
      expect(h.fake.callsOf('sts', 'GetCallerIdentity').at(-1)).to.include({ host: listenerHost, accessKeyId: aliceKey.accessKeyId, error: '' });
    });

    it('never follows a redirect from the STS endpoint', async () => {
      h.fake.interceptor = (_req, res) => {
        res.writeHead(307, { Location: `http://${listenerHost}/`, 'Content-Type': 'text/xml' });
        res.end('<Redirect/>');
        return true;
      };
      expectError(await h.login(aliceKey), 400, /^error making upstream request: received error code 307 from STS/);
      expect(hits).to.equal(0);
    });

    it('with use_sts_region_from_client, refuses a region it does not know', async () => {
      await h.configure({ use_sts_region_from_client: true });
      expectError(await h.login(aliceKey, { region: 'xx-nowhere-1' }), 400, 'unable to get regional STS endpoint for region: xx-nowhere-1');
      expect(hits).to.equal(0);
    });
  });

  describe('bad requests', () => {
    let valid: Record<string, unknown>;
    before(async () => {
      valid = await signedLogin({ credentials: signing(aliceKey) });
    });
    const post = (body: Record<string, unknown>) => h.anon.post('auth/cloud/login', body);

    it('says which proof style is incomplete or mixed', async () => {
      expectError(await post({}), 400, "didn't supply required authentication values");
      expectError(await post({ ...valid, pkcs7: 'MIAG' }), 400, 'supplied auth values for both ec2 and iam auth types');
      expectError(await post({ iam_http_request_method: 'POST', iam_request_url: valid.iam_request_url }), 400, 'supplied some of the auth values for the iam auth type but not all');
      expectError(await post({ identity: 'e30=' }), 400, 'supplied some of the auth values for the ec2 auth type but not all');
    });

    it('checks the method, URL, body and headers in Vault\'s order, each with its own message', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ iam_http_request_method: '' }, 'missing iam_http_request_method'],
        [{ iam_http_request_method: 'PUT' }, "invalid iam_http_request_method; currently only 'GET' and 'POST' are supported"],
        [{ iam_http_request_method: 'post' }, "invalid iam_http_request_method; currently only 'GET' and 'POST' are supported"],
        [{ iam_request_url: '' }, 'missing iam_request_url'],
        [{ iam_request_url: 'https://sts.amazonaws.com/' }, 'failed to base64 decode iam_request_url'],
        [{ iam_request_url: b64('not a url') }, 'error parsing iam_request_url'],
        [{ iam_request_url: b64('https://sts.amazonaws.com/?Action=GetCallerIdentity') }, 'invalid request: the iam_request_url of a POST must have no query string'],
        [{ iam_request_body: '' }, 'missing iam_request_body which is required for POST requests'],
        [{ iam_request_body: '%%%' }, 'failed to base64 decode iam_request_body'],
        [{ iam_request_body: b64('Action=AssumeRole&Version=2011-06-15') }, 'iam request body is invalid'],
        [{ iam_request_body: b64('Action=GetCallerIdentity&Action=GetCallerIdentity') }, 'iam request body is invalid'],
        [{ iam_request_body: b64(`${GET_CALLER_IDENTITY_BODY}&RoleArn=x`) }, 'iam request body is invalid'],
        [{ iam_request_headers: {} }, 'missing iam_request_headers'],
        [{ iam_request_headers: { 'X-Bad': ['a\r\nInjected: yes'] } }, 'invalid request header: X-Bad'],
        [{ iam_request_headers: { 'Bad Name': ['a'] } }, 'invalid request header: Bad Name'],
      ];
      for (const [change, message] of cases) expectError(await post({ ...valid, ...change }), 400, message);
      const unreadable = await post({ ...valid, iam_request_headers: 'not json at all' });
      expect(unreadable.status).to.equal(400);
      expect(unreadable.body.errors[0]).to.contain('iam_request_headers');
    });

    it('checks the action of a GET', async () => {
      const get = (query: string) => post({ ...valid, iam_http_request_method: 'GET', iam_request_url: b64(`https://sts.amazonaws.com/${query}`), iam_request_body: undefined });
      expectError(await get(''), 400, 'no action found in request');
      expectError(await get('?Action=GetCallerIdentity&Action=GetCallerIdentity'), 400, 'found multiple actions');
      expectError(await get('?Action=AssumeRole'), 400, 'unexpected action parameter, AssumeRole');
    });

    it('passes STS\'s refusal of a bad signature or a wrongly scoped one back as a 400', async () => {
      const forged = { ...aliceKey, secretAccessKey: 'wrong' } as AccessKey;
      expectError(await h.login(forged), 400, /^error making upstream request: received error code 403 from STS: .*<Code>SignatureDoesNotMatch<\/Code>/s);
      expectError(await h.login(aliceKey, { region: 'eu-west-1' }), 400, /Credential should be scoped to a valid region, not 'eu-west-1'/);
    });
  });

  describe('a provider that is down or answers garbage', () => {
    it('reports a refused connection fast as 502', async () => {
      await h.configure({ sts_endpoint: 'http://127.0.0.1:9' });
      expectError(await h.login(aliceKey), 502, /^error making upstream request: error making request: ECONNREFUSED/);
    });

    it('gives up on an endpoint that never answers after the provider timeout', async function () {
      this.timeout(10_000);
      h.fake.interceptor = () => true;
      const started = Date.now();
      expectError(await h.login(aliceKey), 502, /^error making upstream request: error making request: no answer within 2000 ms/);
      expect(Date.now() - started).to.be.below(5_000);
    });

    it('refuses answers that are not STS XML', async () => {
      const answer = (status: number, type: string, body: string) => {
        h.fake.interceptor = (_req, res) => {
          res.writeHead(status, { 'Content-Type': type });
          res.end(body);
          return true;
        };
      };
      answer(200, 'text/html', '<html>captive portal</html>');
      expectError(await h.login(aliceKey), 502, 'error making upstream request: body of GetCallerIdentity is invalid');
      answer(200, 'text/xml', '<GetCallerIdentityResponse><nonsense/></GetCallerIdentityResponse>');
      expectError(await h.login(aliceKey), 502, 'error making upstream request: error parsing STS response');
      answer(200, 'text/xml', '<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>arn:aws:iam::1:group/x</Arn><UserId>X</UserId><Account>1</Account></GetCallerIdentityResult></GetCallerIdentityResponse>');
      expectError(await h.login(aliceKey), 400, 'error parsing arn "arn:aws:iam::1:group/x": unrecognized principal type: "group"');
      answer(503, 'text/xml', '<ErrorResponse><Error><Code>ServiceUnavailable</Code></Error></ErrorResponse>');
      expectError(await h.login(aliceKey), 502, /^error making upstream request: received error code 503 from STS/);
    });

    it('retries a failing STS max_retries times', async () => {
      await h.configure({ max_retries: 1 });
      let attempts = 0;
      h.fake.interceptor = (_req, res) => {
        attempts++;
        res.writeHead(500, { 'Content-Type': 'text/xml' });
        res.end('<ErrorResponse/>');
        return true;
      };
      expectError(await h.login(aliceKey), 502, /received error code 500 from STS/);
      expect(attempts).to.equal(2);
    });
  });

  describe('inferring the EC2 instance', () => {
    const region = 'us-west-2';
    let webRole: ReturnType<CloudHarness['world']['addRole']>;
    before(async () => {
      webRole = h.world.addRole(MAIN_ACCOUNT, 'web');
      h.world.addInstanceProfile(MAIN_ACCOUNT, 'web-profile', ['web'], { path: '/apps/' });
    });
    const instanceKey = (fields: Record<string, unknown> = {}) => {
      const instance = h.world.addInstance({ accountId: MAIN_ACCOUNT, region, profileName: 'web-profile', ...fields });
      return { instance, key: h.world.instanceCredentials(instance) };
    };

    it('logs an instance in when it runs in the inferred region and meets every instance constraint', async () => {
      const { instance, key } = instanceKey({ vpcId: 'vpc-web', subnetId: 'subnet-web', imageId: 'ami-web' });
      const res = await h.writeRole('web', {
        bound_iam_principal_arn: webRole.arn,
        inferred_entity_type: 'ec2_instance',
        inferred_cloud_region: region,
        bound_vpc_id: 'vpc-web',
        bound_subnet_id: 'subnet-web',
        bound_ami_id: 'ami-web',
        bound_account_id: MAIN_ACCOUNT,
        bound_region: region,
        bound_iam_instance_profile_arn: `arn:aws:iam::${MAIN_ACCOUNT}:instance-profile/apps/*`,
        bound_iam_role_arn: webRole.arn,
        bound_ec2_instance_id: instance.instanceId,
      });
      expect(res.status, res.text).to.equal(204);
      await h.root.post('auth/cloud/config/identity', { iam_metadata: 'inferred_entity_id,inferred_entity_type,inferred_cloud_region' });
      try {
        const login = await h.login(key);
        expect(login.status, login.text).to.equal(200);
        expect(login.body.auth.metadata).to.deep.include({ inferred_entity_id: instance.instanceId, inferred_entity_type: 'ec2_instance', inferred_cloud_region: region });
      } finally {
        await h.root.post('auth/cloud/config/identity', { iam_metadata: 'default' });
      }
      expect(h.fake.callsOf('ec2', 'DescribeInstances').at(-1)).to.include({ accessKeyId: h.serviceKey.accessKeyId, error: '' });
    });

    it('refuses an instance that is not running, not in the region, or a caller that is no instance', async () => {
      await h.writeRole('web', { bound_ec2_instance_id: '' });
      const { instance, key } = instanceKey({ vpcId: 'vpc-web', subnetId: 'subnet-web', imageId: 'ami-web' });
      instance.state = 'stopped';
      const prefix = `failed to verify ${instance.instanceId} as a valid EC2 instance in region ${region}: `;
      expectError(await h.login(key), 400, `${prefix}instance is not in 'running' state`);
      const elsewhere = h.world.addInstance({ accountId: MAIN_ACCOUNT, region: 'us-east-1', profileName: 'web-profile' });
      expectError(
        await h.login(h.world.instanceCredentials(elsewhere)),
        400,
        `failed to verify ${elsewhere.instanceId} as a valid EC2 instance in region ${region}: error fetching description for instance ID "${elsewhere.instanceId}": InvalidInstanceID.NotFound: The instance ID '${elsewhere.instanceId}' does not exist`,
      );
      await h.writeRole('web-users', { inferred_entity_type: 'ec2_instance', inferred_cloud_region: region, bound_vpc_id: 'vpc-web', bound_iam_principal_arn: alice.arn });
      expectError(await h.login(aliceKey, { role: 'web-users' }), 400, /^failed to verify {2}as a valid EC2 instance in region us-west-2: the caller is an IAM user/);
    });

    it('refuses an instance that misses a constraint, naming it', async () => {
      const cases: [Record<string, unknown>, Record<string, unknown>, (i: { instanceId: string }) => string][] = [
        [{ vpcId: 'vpc-other' }, {}, () => 'VPC ID "vpc-other" does not satisfy the constraint on role "web"'],
        [{ subnetId: 'subnet-other' }, {}, () => 'subnet ID "subnet-other" does not satisfy the constraint on role "web"'],
        [{ imageId: 'ami-other' }, {}, () => 'AMI ID "ami-other" does not belong to role "web"'],
        [{}, { bound_ec2_instance_id: 'i-0000000000000000a' }, (i) => `instance ID "${i.instanceId}" does not belong to the role "web"`],
        [{}, { bound_account_id: '000000000000', bound_ec2_instance_id: '' }, () => `account ID "${MAIN_ACCOUNT}" does not belong to role "web"`],
        [{}, { bound_account_id: MAIN_ACCOUNT, bound_region: 'eu-west-1' }, () => `Region "${region}" does not satisfy the constraint on role "web"`],
        [{}, { bound_region: region, bound_iam_instance_profile_arn: `arn:aws:iam::${MAIN_ACCOUNT}:instance-profile/other` },
          () => `IAM instance profile ARN "arn:aws:iam::${MAIN_ACCOUNT}:instance-profile/apps/web-profile" does not satisfy the constraint role "web"`],
        [{}, { bound_iam_instance_profile_arn: '', bound_iam_role_arn: `arn:aws:iam::${MAIN_ACCOUNT}:role/db*` },
          () => `IAM role ARN "${webRole.arn}" does not satisfy the constraint role "web"`],
      ];
      for (const [instanceFields, roleFields, message] of cases) {
        await h.writeRole('web', { bound_vpc_id: 'vpc-web', bound_subnet_id: 'subnet-web', bound_ami_id: 'ami-web', ...roleFields });
        const { instance, key } = instanceKey({ vpcId: 'vpc-web', subnetId: 'subnet-web', imageId: 'ami-web', ...instanceFields });
        expectError(await h.login(key), 400, `error validating instance: ${message(instance)}`);
      }
      await h.writeRole('web', { bound_iam_role_arn: webRole.arn });
    });

    it('describes a satellite account\'s instance with the STS role configured for that account', async () => {
      const satelliteRole = h.world.addRole(SATELLITE_ACCOUNT, 'app');
      h.world.addInstanceProfile(SATELLITE_ACCOUNT, 'app-profile', ['app']);
      h.world.addRole(SATELLITE_ACCOUNT, 'keywarden-reader', { trust: [h.serviceUser.arn] });
      const instance = h.world.addInstance({ accountId: SATELLITE_ACCOUNT, region, profileName: 'app-profile' });
      const written = await h.writeRole('satellite', { resolve_cloud_unique_ids: false, bound_iam_principal_arn: satelliteRole.arn, inferred_entity_type: 'ec2_instance', inferred_cloud_region: region, bound_account_id: SATELLITE_ACCOUNT });
      expect(written.status, written.text).to.equal(204);
      const key = h.world.instanceCredentials(instance);
      expectError(
        await h.login(key, { role: 'satellite' }),
        400,
        `failed to verify ${instance.instanceId} as a valid EC2 instance in region ${region}: unable to fetch client for account ID "${SATELLITE_ACCOUNT}" -- default client is for account "${MAIN_ACCOUNT}"`,
      );
      await h.root.post(`auth/cloud/config/sts/${SATELLITE_ACCOUNT}`, { sts_role: `arn:aws:iam::${SATELLITE_ACCOUNT}:role/keywarden-reader` });
      const res = await h.login(key, { role: 'satellite' });
      expect(res.status, res.text).to.equal(200);
      expect(h.fake.callsOf('sts', 'AssumeRole').at(-1)).to.include({ accessKeyId: h.serviceKey.accessKeyId, error: '' });
      expect(h.fake.callsOf('ec2', 'DescribeInstances').at(-1)?.accessKeyId).to.match(/^ASIA/);
    });
  });

  describe('provider credentials', () => {
    let instanceRole: ReturnType<CloudHarness['world']['addRole']>;
    before(async () => {
      instanceRole = h.world.addRole(MAIN_ACCOUNT, 'worker');
      h.world.addInstanceProfile(MAIN_ACCOUNT, 'worker-profile', ['worker']);
      await h.writeRole('worker', { bound_iam_principal_arn: instanceRole.arn, inferred_entity_type: 'ec2_instance', inferred_cloud_region: 'us-east-1', bound_account_id: MAIN_ACCOUNT });
    });
    const workerLogin = () => {
      const instance = h.world.addInstance({ accountId: MAIN_ACCOUNT, region: 'us-east-1', profileName: 'worker-profile' });
      return h.login(h.world.instanceCredentials(instance));
    };
    const withoutStaticKeys = () => h.configure({ access_key: '', secret_key: '' });

    it('uses CLOUD_ACCESS_KEY and CLOUD_SECRET_KEY when config/client has no keys', async () => {
      const envUser = h.world.addUser(MAIN_ACCOUNT, 'from-env');
      const envKey = h.world.keyFor(envUser);
      process.env.CLOUD_ACCESS_KEY = envKey.accessKeyId;
      process.env.CLOUD_SECRET_KEY = envKey.secretAccessKey;
      try {
        await withoutStaticKeys();
        const res = await workerLogin();
        expect(res.status, res.text).to.equal(200);
        expect(h.fake.callsOf('ec2', 'DescribeInstances').at(-1)?.accessKeyId).to.equal(envKey.accessKeyId);
      } finally {
        delete process.env.CLOUD_ACCESS_KEY;
        delete process.env.CLOUD_SECRET_KEY;
      }
    });

    it('falls back to instance metadata credentials, and says so when there are none', async () => {
      h.world.metadataInstanceId = undefined;
      await withoutStaticKeys();
      expectError(await workerLogin(), 502, /the instance metadata service at http:\/\/127\.0\.0\.1:\d+ gave none/);
      const host = h.world.addInstance({ accountId: MAIN_ACCOUNT, region: 'us-east-1', profileName: 'worker-profile' });
      h.world.metadataInstanceId = host.instanceId;
      const res = await workerLogin();
      expect(res.status, res.text).to.equal(200);
      const caller = h.world.keys.get(h.fake.callsOf('ec2', 'DescribeInstances').at(-1)!.accessKeyId)!;
      expect(caller.owner).to.deep.include({ kind: 'session', sessionName: host.instanceId });
      h.world.metadataInstanceId = undefined;
    });

    it('refuses half-set static keys clearly', async () => {
      await h.configure({ secret_key: '' });
      expectError(await workerLogin(), 400, /static credentials in config\/client are incomplete/);
    });

    it('drops cached clients when the configuration changes', async () => {
      expect((await workerLogin()).status).to.equal(200);
      const second = h.world.addUser(MAIN_ACCOUNT, 'second-service');
      const secondKey = h.world.keyFor(second);
      await h.root.post('auth/cloud/config/client', { access_key: secondKey.accessKeyId, secret_key: secondKey.secretAccessKey });
      expect((await workerLogin()).status).to.equal(200);
      expect(h.fake.callsOf('ec2', 'DescribeInstances').at(-1)?.accessKeyId).to.equal(secondKey.accessKeyId);
    });

    it('reports an EC2 endpoint that is down as 502 with what failed', async () => {
      await h.configure({ endpoint: 'http://127.0.0.1:9' });
      expectError(await workerLogin(), 502, /^failed to verify i-[0-9a-f]+ as a valid EC2 instance in region us-east-1: DescribeInstances in us-east-1: the provider could not be reached \(ECONNREFUSED\)/);
    });
  });
});
