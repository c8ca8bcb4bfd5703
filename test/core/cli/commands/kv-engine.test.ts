/**
 * `keywarden kv …` as a user runs it (a subprocess) against a real server, on a version 2 and a
 * version 1 mount: the CLI finds the version through sys/internal/ui/mounts, prints vault's
 * sections and messages, and exits as vault does.
 */
import { expect } from 'chai';
import { startUnsealedServer, tempDir } from '../../../helpers/server.js';
import type { RunningServer } from '../../../../core/server.js';
import type { TestClient } from '../../../helpers/http.js';
import { runCli, type CliRun } from '../../../helpers/cli.js';

describe('keywarden kv', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let home: { path: string; remove: () => Promise<void> };
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]): Promise<CliRun> => runCli(args, env);

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    home = await tempDir();
    env = { PATH: process.env.PATH, HOME: home.path, KEYWARDEN_ADDR: server.address, VAULT_TOKEN: server.rootToken };
    await server.client.post('sys/mounts/plain', { type: 'kv' });
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  it('secrets enable -version=2 mounts a version 2 store', async () => {
    const enabled = await cli('secrets', 'enable', '-path=secret', '-version=2', 'kv');
    expect(enabled.code, enabled.stderr).to.equal(0);
    expect((await server.client.get('sys/mounts/secret')).body.data.options).to.deep.equal({ version: '2' });
  });

  it('put writes a version and prints its metadata under the secret path; get prints metadata and data', async () => {
    const put = await cli('kv', 'put', 'secret/app/db', 'user=app', 'password=s3cret');
    expect(put.code, put.stderr).to.equal(0);
    expect(put.stdout).to.match(/^=== Secret Path ===\nsecret\/data\/app\/db\n\n=+ Metadata =+\nKey +Value\n/);
    expect(put.stdout).to.match(/\nversion +1\n/);
    expect(put.stdout).to.match(/\ndeletion_time +n\/a\n/);

    const get = await cli('kv', 'get', 'secret/app/db');
    expect(get.code, get.stderr).to.equal(0);
    expect(get.stdout).to.contain('secret/data/app/db\n');
    expect(get.stdout).to.match(/=+ Metadata =+\n/);
    expect(get.stdout).to.match(/=+ Data =+\nKey +Value\n-+ +-+\npassword +s3cret\nuser +app\n$/);
    expect((await cli('kv', 'get', '-field=password', 'secret/app/db')).stdout).to.equal('s3cret');
    const json = JSON.parse((await cli('kv', 'get', '-format=json', 'secret/app/db')).stdout);
    expect(json.data.data).to.deep.equal({ user: 'app', password: 's3cret' });
    expect(json.data.metadata.version).to.equal(1);
    expect((await cli('kv', 'get', '-mount=secret', 'app/db')).stdout).to.contain('s3cret');
  });

  it('put -cas and patch; get -version reads an older version', async () => {
    const stale = await cli('kv', 'put', '-cas=0', 'secret/app/db', 'user=x');
    expect(stale.code).to.equal(2);
    expect(stale.stderr).to.contain('check-and-set parameter did not match the current version');
    const patched = await cli('kv', 'patch', '-cas=1', 'secret/app/db', 'password=rotated');
    expect(patched.code, patched.stderr).to.equal(0);
    expect(patched.stdout).to.match(/\nversion +2\n/);
    expect((await cli('kv', 'get', '-field=password', 'secret/app/db')).stdout).to.equal('rotated');
    expect((await cli('kv', 'get', '-field=user', 'secret/app/db')).stdout).to.equal('app');
    expect((await cli('kv', 'get', '-version=1', '-field=password', 'secret/app/db')).stdout).to.equal('s3cret');
  });

  it('list, delete, undelete and destroy', async () => {
    await cli('kv', 'put', 'secret/app/cache', 'url=redis://x');
    const list = await cli('kv', 'list', 'secret/app');
    expect(list.code, list.stderr).to.equal(0);
    expect(list.stdout).to.equal('Keys\n----\ncache\ndb\n');

    const deleted = await cli('kv', 'delete', 'secret/app/cache');
    expect(deleted.stdout).to.equal('Success! Data deleted (if it existed) at: secret/app/cache\n');
    const gone = await cli('kv', 'get', 'secret/app/cache');
    expect(gone.stdout).to.match(/deletion_time +\d{4}-/);
    expect(gone.stdout).to.not.contain('Data ==');
    const undeleted = await cli('kv', 'undelete', '-versions=1', 'secret/app/cache');
    expect(undeleted.stdout).to.equal('Success! Data written to: secret/undelete/app/cache\n');
    expect((await cli('kv', 'get', '-field=url', 'secret/app/cache')).stdout).to.equal('redis://x');

    expect((await cli('kv', 'delete', '-versions=1', 'secret/app/db')).code).to.equal(0);
    expect((await cli('kv', 'get', '-version=1', '-format=json', 'secret/app/db')).stdout).to.contain('"deletion_time": "2');
    const destroyed = await cli('kv', 'destroy', '-versions=1,2', 'secret/app/db');
    expect(destroyed.stdout).to.equal('Success! Data written to: secret/destroy/app/db\n');
    expect((await cli('kv', 'get', '-format=json', 'secret/app/db')).stdout).to.contain('"destroyed": true');
    const noVersions = await cli('kv', 'destroy', 'secret/app/db');
    expect(noVersions.code).to.equal(1);
    expect(noVersions.stderr).to.contain('No versions provided');

    const none = await cli('kv', 'get', 'secret/app/none');
    expect(none.code).to.equal(2);
    expect(none.stderr).to.contain('No value found at secret/data/app/none');
  });

  it('metadata put, patch, get and delete', async () => {
    await cli('kv', 'put', 'secret/meta', 'a=1');
    const put = await cli('kv', 'metadata', 'put', '-max-versions=4', '-delete-version-after=1h', '-custom-metadata=owner=ops', '-custom-metadata=tier=gold', 'secret/meta');
    expect(put.code, put.stderr).to.equal(0);
    expect(put.stdout).to.equal('Success! Data written to: secret/metadata/meta\n');
    const patch = await cli('kv', 'metadata', 'patch', '-custom-metadata=tier=', '-cas-required=true', 'secret/meta');
    expect(patch.code, patch.stderr).to.equal(0);

    const get = await cli('kv', 'metadata', 'get', 'secret/meta');
    expect(get.code, get.stderr).to.equal(0);
    expect(get.stdout).to.match(/^=+ Metadata Path =+\nsecret\/metadata\/meta\n\n=+ Metadata =+\n/);
    expect(get.stdout).to.match(/\nmax_versions +4\n/);
    expect(get.stdout).to.match(/\ncas_required +true\n/);
    expect(get.stdout).to.match(/\ndelete_version_after +1h0m0s\n/);
    expect(get.stdout).to.match(/\ncustom_metadata +map\[owner:ops\]\n/);
    expect(get.stdout).to.match(/=+ Version 1 =+\nKey +Value\n-+ +-+\ncreated_time +\d{4}-/);

    const deleted = await cli('kv', 'metadata', 'delete', 'secret/meta');
    expect(deleted.stdout).to.equal('Success! Data deleted (if it existed) at: secret/metadata/meta\n');
    expect((await cli('kv', 'metadata', 'get', 'secret/meta')).code).to.equal(2);
  });

  it('on a version 1 mount: plain put, get, list and delete; version 2 commands refused', async () => {
    const put = await cli('kv', 'put', 'plain/svc', 'token=abc');
    expect(put.stdout).to.equal('Success! Data written to: plain/svc\n');
    const get = await cli('kv', 'get', 'plain/svc');
    expect(get.stdout).to.match(/token +abc\n/);
    expect((await cli('kv', 'list', 'plain')).stdout).to.equal('Keys\n----\nsvc\n');
    expect((await cli('kv', 'patch', 'plain/svc', 'a=b')).code).to.equal(2);
    const metadata = await cli('kv', 'metadata', 'get', 'plain/svc');
    expect(metadata.code).to.equal(1);
    expect(metadata.stderr).to.contain('Metadata not supported on KV Version 1');
    expect((await cli('kv', 'delete', 'plain/svc')).code).to.equal(0);
    expect((await cli('kv', 'get', 'plain/svc')).code).to.equal(2);
  });

  it('a token without access to the mount cannot learn its version', async () => {
    const token = (await server.client.post('auth/token/create', { policies: ['default'] })).body.auth.client_token as string;
    const refused = await runCli(['kv', 'get', 'secret/app/db'], { ...env, VAULT_TOKEN: token });
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.contain('preflight capability check returned 403');
  });
});
