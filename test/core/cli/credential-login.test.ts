/**
 * `keywarden login -method=userpass` and `-method=approle` as a user runs them (in-process, through
 * `main`), against a real server: the token is stored, the password is asked for without echo when
 * it is not given, and the server's refusals come back as vault's "Error authenticating".
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { main } from '../../../core/cli/main.js';
import type { Io } from '../../../core/cli/output.js';
import { startUnsealedServer, tempDir } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The prompts the CLI asked the terminal (none when every field was given). */
  readonly prompts: readonly string[];
}

describe('keywarden login -method=userpass and -method=approle', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let home: { path: string; remove: () => Promise<void> };

  /** Runs the CLI with no token; `typed` is what the user types at a hidden prompt (undefined: no terminal). */
  const cli = async (args: string[], typed?: string): Promise<Run> => {
    let stdout = '';
    let stderr = '';
    const prompts: string[] = [];
    const io: Io = {
      out: (text) => void (stdout += text),
      err: (text) => void (stderr += text),
      stdin: async () => '',
      secret: async (prompt) => {
        prompts.push(prompt);
        return typed;
      },
    };
    const code = await main(args, io, { HOME: home.path, KEYWARDEN_ADDR: server.address });
    return { code, stdout, stderr, prompts };
  };
  const stored = async () => (await readFile(path.join(home.path, '.keywarden-token'), 'utf8')).trim();
  const policiesOf = async (token: string) => (await server.client.post('auth/token/lookup', { token })).body.data.policies as string[];

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    home = await tempDir();
    const root = server.client;
    await root.put('sys/policy/dev', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    expect((await root.post('sys/auth/userpass', { type: 'userpass' })).status).to.equal(204);
    await root.post('auth/userpass/users/alice', { password: 'correct horse', token_policies: 'dev' });
    expect((await root.post('sys/auth/machines', { type: 'approle' })).status).to.equal(204);
    await root.post('auth/machines/role/ci', { token_policies: 'dev', role_id: 'ci-role-id' });
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  it('logs in with username and password and keeps the token', async () => {
    const run = await cli(['login', '-method=userpass', '-format=json', 'username=alice', 'password=correct horse']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.prompts).to.deep.equal([]);
    const token = JSON.parse(run.stdout).auth.client_token as string;
    expect(await stored()).to.equal(token);
    expect(await policiesOf(token)).to.deep.equal(['default', 'dev']);
  });

  it('asks for the password without echo when it is not given, as the vault CLI does', async () => {
    const run = await cli(['login', '-method=userpass', '-field=token', 'username=alice'], 'correct horse');
    expect(run.code, run.stderr).to.equal(0);
    expect(run.prompts).to.deep.equal(['Password (will be hidden): ']);
    expect(await stored()).to.equal(run.stdout.trim());
  });

  it('refuses a missing password with no terminal to ask, and a missing username, as usage errors', async () => {
    const noTerminal = await cli(['login', '-method=userpass', 'username=alice']);
    expect(noTerminal.code).to.equal(1);
    expect(noTerminal.stderr).to.contain('no password given');
    const noUser = await cli(['login', '-method=userpass', 'password=x']);
    expect(noUser.code).to.equal(1);
    expect(noUser.stderr).to.contain("'username' must be specified");
  });

  it('answers a wrong password with the server\'s reason', async () => {
    const run = await cli(['login', '-method=userpass', 'username=alice', 'password=wrong']);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.match(/^Error authenticating: /);
    expect(run.stderr).to.contain('Code: 400');
    expect(run.stderr).to.contain('invalid username or password');
  });

  it('logs in with role_id and secret_id on a mount at a custom path', async () => {
    const secretId = (await server.client.post('auth/machines/role/ci/secret-id', {})).body.data.secret_id as string;
    const run = await cli(['login', '-method=approle', '-path=machines', '-format=json', 'role_id=ci-role-id', `secret_id=${secretId}`]);
    expect(run.code, run.stderr).to.equal(0);
    const auth = JSON.parse(run.stdout).auth;
    expect(auth.metadata).to.deep.equal({ role_name: 'ci' });
    expect(await stored()).to.equal(auth.client_token);
    expect(await policiesOf(auth.client_token)).to.deep.equal(['default', 'dev']);
  });

  it('answers a wrong secret ID with the server\'s reason, and refuses unknown fields as a usage error', async () => {
    const wrong = await cli(['login', '-method=approle', '-path=machines', 'role_id=ci-role-id', 'secret_id=nope']);
    expect(wrong.code).to.equal(2);
    expect(wrong.stderr).to.contain('invalid role or secret ID');
    const unknown = await cli(['login', '-method=approle', '-path=machines', 'role=ci']);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('unknown login field "role"');
  });
});
