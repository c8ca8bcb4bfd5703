/** `keywarden lease lookup|renew|revoke` as a user runs them: a subprocess against a real server. */
import { expect } from 'chai';
import { startUnsealedServer, tempDir } from '../../../helpers/server.js';
import { TestClient } from '../../../helpers/http.js';
import type { RunningServer } from '../../../../core/server.js';
import { runCli, type CliRun } from '../../../helpers/cli.js';

describe('keywarden lease', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let anonymous: TestClient;
  let home: { path: string; remove: () => Promise<void> };
  let env: NodeJS.ProcessEnv;
  const cli = (args: string[]): Promise<CliRun> => runCli(args, env);

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    anonymous = new TestClient(server.address);
    home = await tempDir();
    env = { PATH: process.env.PATH, HOME: home.path, KEYWARDEN_ADDR: server.address, KEYWARDEN_TOKEN: server.rootToken };
    for (const mount of ['staff', 'contractors']) {
      expect((await server.client.post(`sys/auth/${mount}`, { type: 'userpass' })).status).to.equal(204);
      expect((await server.client.post(`auth/${mount}/users/dana`, { password: 'correct horse' })).status).to.equal(204);
    }
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  async function login(mount: string): Promise<string> {
    const res = await anonymous.post(`auth/${mount}/login/dana`, { password: 'correct horse' });
    expect(res.status, res.text).to.equal(200);
    return res.body.auth.client_token as string;
  }
  const alive = async (token: string) => (await anonymous.get('auth/token/lookup-self', { token })).status === 200;
  async function leaseOf(mount: string): Promise<string> {
    const res = await server.client.list(`sys/leases/lookup/auth/${mount}/login/dana/`);
    return `auth/${mount}/login/dana/${(res.body.data.keys as string[])[0]}`;
  }

  it('lookup prints the lease; -format=json prints Vault\'s envelope', async () => {
    await login('staff');
    const id = await leaseOf('staff');
    const table = await cli(['lease', 'lookup', id]);
    expect(table.code, table.stderr).to.equal(0);
    expect(table.stdout).to.match(new RegExp(`^id\\s+${id}$`, 'm'));
    expect(table.stdout).to.match(/^renewable\s+true$/m);
    const json = await cli(['lease', 'lookup', '-format=json', id]);
    expect(JSON.parse(json.stdout).data.id).to.equal(id);
  });

  it('revoke -prefix auth/<mount>/ revokes every token of the mount and prints Vault\'s line', async () => {
    const first = await login('staff');
    const second = await login('staff');
    const other = await login('contractors');
    const res = await cli(['lease', 'revoke', '-prefix', 'auth/staff/']);
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.equal('Success! Revoked any leases with prefix: auth/staff/\n');
    expect(await alive(first)).to.equal(false);
    expect(await alive(second)).to.equal(false);
    expect(await alive(other)).to.equal(true);
  });

  it('revoke revokes one lease; -force needs -prefix', async () => {
    await server.client.put('sys/leases/revoke-prefix/auth/contractors/');
    const token = await login('contractors');
    const id = await leaseOf('contractors');
    const refused = await cli(['lease', 'revoke', '-force', id]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.equal('Specifying -force requires also specifying -prefix\n');
    expect(await alive(token)).to.equal(true);
    const res = await cli(['lease', 'revoke', id]);
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.equal(`Success! Revoked lease: ${id}\n`);
    expect(await alive(token)).to.equal(false);
  });

  it('revoke -force -prefix warns, revokes and says so', async () => {
    const token = await login('contractors');
    const res = await cli(['lease', 'revoke', '-force', '-prefix', 'auth/contractors']);
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stderr).to.match(/^Warning! Force-removing leases/);
    expect(res.stdout).to.equal('Success! Force revoked any leases with prefix: auth/contractors\n');
    expect(await alive(token)).to.equal(false);
  });

  it('renew of a token\'s lease fails with the server\'s reason and exit code 2', async () => {
    await login('staff');
    const id = await leaseOf('staff');
    const res = await cli(['lease', 'renew', id]);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.contain(`Error renewing ${id}`);
    expect(res.stderr).to.contain('tokens cannot be renewed through this endpoint');
  });
});
