/**
 * `keywarden login -method=cloud` as a workload runs it: the CLI signs GetCallerIdentity with its
 * CLOUD_* credentials, the server verifies it through the (fake) provider, the token is stored.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startCloudHarness, MAIN_ACCOUNT, type CloudHarness } from '../../plugins/cloud-auth/harness.js';
import { tempDir } from '../../helpers/server.js';
import { runCli as cli } from '../../helpers/cli.js';

describe('keywarden login -method=cloud', function () {
  this.timeout(60_000);
  let h: CloudHarness;
  let home: { path: string; remove: () => Promise<void> };

  before(async () => {
    h = await startCloudHarness();
    home = await tempDir();
    await h.configure({ iam_server_id_header_value: 'keywarden.example.com' });
    await h.root.put('sys/policy/app', { policy: 'path "transit/encrypt/*" { capabilities = ["update"] }' });
  });
  after(async () => {
    await h.close();
    await home.remove();
  });

  it('logs in with a signed GetCallerIdentity and keeps the token, with no warning about the Node version', async () => {
    // The AWS SDK warns at its first call on a Node older than it will support (issue #38): neither
    // the CLI nor the server (in this process) may print it on the runtime the project pins.
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const user = h.world.addUser(MAIN_ACCOUNT, 'batch-job');
    const key = h.world.keyFor(user);
    expect((await h.writeRole('batch', { auth_type: 'iam', bound_iam_principal_arn: user.arn, token_policies: 'app' })).status).to.be.oneOf([200, 204]);
    const env = {
      PATH: process.env.PATH,
      HOME: home.path,
      KEYWARDEN_ADDR: h.server.address,
      CLOUD_ACCESS_KEY: key.accessKeyId,
      CLOUD_SECRET_KEY: key.secretAccessKey,
      CLOUD_REGION: 'us-east-1',
    };
    const login = await cli(['login', '-method=cloud', '-format=json', 'role=batch', 'header_value=keywarden.example.com'], env)
      .finally(() => process.off('warning', onWarning));
    expect(login.code, login.stderr).to.equal(0);
    expect(login.stderr).not.to.match(/NodeVersionSupportWarning|require node/i);
    expect(warnings.filter((w) => /node/i.test(w))).to.deep.equal([]);
    const body = JSON.parse(login.stdout.slice(login.stdout.indexOf('{')));
    expect(body.auth.policies).to.include('app');
    const stored = (await readFile(path.join(home.path, '.keywarden-token'), 'utf8')).trim();
    expect(stored).to.equal(body.auth.client_token);
    const lookup = await cli(['token', 'lookup', '-format=json'], { ...env, CLOUD_ACCESS_KEY: '', CLOUD_SECRET_KEY: '' });
    expect(JSON.parse(lookup.stdout).data.policies).to.include('app');
  });

  it('fails with the server\'s reason when the server-id header value is wrong', async () => {
    const user = h.world.addUser(MAIN_ACCOUNT, 'other-job');
    const key = h.world.keyFor(user);
    await h.writeRole('other', { auth_type: 'iam', bound_iam_principal_arn: user.arn });
    const res = await cli(['login', '-method=cloud', 'role=other', 'header_value=wrong.example.com'], {
      PATH: process.env.PATH,
      HOME: home.path,
      KEYWARDEN_ADDR: h.server.address,
      CLOUD_ACCESS_KEY: key.accessKeyId,
      CLOUD_SECRET_KEY: key.secretAccessKey,
    });
    expect(res.code).to.equal(2);
    expect(res.stderr).to.match(/^Error authenticating: /);
    expect(res.stderr).to.match(/Code: 400/);
  });

  it('refuses unknown login fields as a usage error', async () => {
    const res = await cli(['login', '-method=cloud', 'rolle=x'], { PATH: process.env.PATH, HOME: home.path, KEYWARDEN_ADDR: h.server.address });
    expect(res.code).to.equal(1);
  });
});
