/** The CLI as a user runs it (a subprocess) against a real server, for every command group. */
import { expect } from 'chai';
import { access, lstat, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestServer, tempDir } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';
import { octal } from '../../helpers/files.js';
import { runCli, type CliRun } from '../../helpers/cli.js';

describe('keywarden CLI commands', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let home: { path: string; remove: () => Promise<void> };
  let env: NodeJS.ProcessEnv;

  const cli = (args: string[], input?: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<CliRun> => runCli(args, { ...env, ...extraEnv }, input);
  const expectNoFile = (file: string) =>
    access(file).then(
      () => expect.fail(`${file} was written`),
      (err: NodeJS.ErrnoException) => expect(err.code).to.equal('ENOENT'),
    );

  before(async () => {
    server = await startTestServer();
    home = await tempDir();
    env = { PATH: process.env.PATH, HOME: home.path, KEYWARDEN_ADDR: server.address };
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  let rootToken: string;
  let keys: string[];

  it('operator init prints the shares and root token; status exits 2 while sealed', async () => {
    const init = await cli(['operator', 'init', '-key-shares=3', '-key-threshold=2', '-format=json']);
    expect(init.code, init.stderr).to.equal(0);
    const body = JSON.parse(init.stdout);
    expect(body.unseal_keys_b64).to.have.length(3);
    rootToken = body.root_token;
    keys = body.unseal_keys_b64;
    const status = await cli(['status']);
    expect(status.code).to.equal(2);
    expect(status.stdout).to.match(/Sealed\s+true/);
  });

  it('operator unseal takes shares one at a time, and refuses a missing key without a terminal', async () => {
    const none = await cli(['operator', 'unseal']);
    expect(none.code).to.equal(1);
    const first = await cli(['operator', 'unseal', keys[0]!]);
    expect(first.stdout).to.match(/Unseal Progress\s+1\/2/);
    const bad = await cli(['operator', 'unseal', 'not-a-key']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/^Error unsealing: Error making API request\./);
    expect(bad.stderr).to.contain("'key' must be a valid hex or base64 string");
    const second = await cli(['operator', 'unseal', keys[2]!]);
    expect(second.stdout).to.match(/Sealed\s+false/);
    expect((await cli(['status'])).code).to.equal(0);
  });

  it('login stores the token in the token helper file', async () => {
    const login = await cli(['login', rootToken]);
    expect(login.code, login.stderr).to.equal(0);
    expect((await readFile(path.join(home.path, '.keywarden-token'), 'utf8')).trim()).to.equal(rootToken);
    const bad = await cli(['login', 'hvs.nottherighttoken0000000'], undefined, { KEYWARDEN_TOKEN_FILE: path.join(home.path, 'other-token') });
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/^Error authenticating: /);
  });

  it('login -no-store prints the token and does not keep it', async () => {
    const file = path.join(home.path, 'never-written');
    const noStore = await cli(['login', '-no-store', '-format=json', rootToken], undefined, { KEYWARDEN_TOKEN_FILE: file });
    expect(noStore.code, noStore.stderr).to.equal(0);
    expect(JSON.parse(noStore.stdout).auth.client_token).to.equal(rootToken);
    expect(noStore.stderr).to.contain('not stored');
    await expectNoFile(file);
  });

  it('login -token-only prints only the token and does not keep it; -no-store with -no-print is refused', async () => {
    const file = path.join(home.path, 'never-written-either');
    const tokenOnly = await cli(['login', '-token-only', rootToken], undefined, { KEYWARDEN_TOKEN_FILE: file });
    expect(tokenOnly.stdout).to.equal(rootToken);
    expect(tokenOnly.stderr).to.equal('');
    await expectNoFile(file);
    const both = await cli(['login', '-no-store', '-no-print', rootToken], undefined, { KEYWARDEN_TOKEN_FILE: file });
    expect(both.code).to.equal(1);
    expect(both.stderr).to.contain('cannot be used together');
  });

  it('VAULT_TOKEN wins over the token helper file', async () => {
    const other = JSON.parse((await cli(['token', 'create', '-policy=default', '-format=json'])).stdout).auth.client_token as string;
    const self = await cli(['token', 'lookup', '-field=id'], undefined, { VAULT_TOKEN: other });
    expect(self.stdout).to.equal(other);
  });

  it('login warns that VAULT_TOKEN, when set, wins over the token it stores', async () => {
    const login = await cli(['login', rootToken], undefined, { KEYWARDEN_TOKEN_FILE: path.join(home.path, 'warned-token'), VAULT_TOKEN: rootToken });
    expect(login.code, login.stderr).to.equal(0);
    expect(login.stderr).to.contain('VAULT_TOKEN environment variable is set');
  });

  it('login keeps the token file 0600, also one that already existed with mode 0644', async () => {
    const file = path.join(home.path, 'shared-token');
    await writeFile(file, 'an older token', { mode: 0o644 });
    const login = await cli(['login', rootToken], undefined, { KEYWARDEN_TOKEN_FILE: file });
    expect(login.code, login.stderr).to.equal(0);
    expect((await readFile(file, 'utf8')).trim()).to.equal(rootToken);
    expect(octal((await stat(file)).mode & 0o7777)).to.equal('0600');
  });

  it('login refuses a token file that is a symbolic link, says why, and leaves the file it points at untouched', async () => {
    const target = path.join(home.path, 'bashrc');
    await writeFile(target, 'export PATH=/usr/bin\n', { mode: 0o644 });
    const file = path.join(home.path, 'linked-token');
    await symlink(target, file);
    const login = await cli(['login', rootToken], undefined, { KEYWARDEN_TOKEN_FILE: file });
    expect(login.code, login.stderr).to.equal(2);
    expect(login.stderr).to.contain('Error storing token').and.contain('symbolic link');
    expect(await readFile(target, 'utf8')).to.equal('export PATH=/usr/bin\n');
    expect(octal((await stat(target)).mode & 0o7777)).to.equal('0644');
    expect((await lstat(file)).isSymbolicLink()).to.equal(true);
  });

  it('login creates a missing token file directory 0700 and the file in it 0600', async () => {
    const file = path.join(home.path, 'new-dir', 'token');
    const login = await cli(['login', rootToken], undefined, { KEYWARDEN_TOKEN_FILE: file });
    expect(login.code, login.stderr).to.equal(0);
    expect(octal((await stat(path.dirname(file))).mode & 0o7777)).to.equal('0700');
    expect(octal((await stat(file)).mode & 0o7777)).to.equal('0600');
  });

  it('secrets enable/list/disable and auth list', async () => {
    expect((await cli(['secrets', 'enable', '-path=crypto/eu', '-description=EU keys', 'transit'])).code).to.equal(0);
    const list = await cli(['secrets', 'list']);
    expect(list.stdout).to.match(/crypto\/eu\/\s+transit\s+transit_[0-9a-f]{8}\s+EU keys/);
    const json = JSON.parse((await cli(['secrets', 'list', '-format=json'])).stdout);
    expect(json['crypto/eu/'].type).to.equal('transit');
    expect((await cli(['secrets', 'enable', '-path=tmp', 'transit'])).code).to.equal(0);
    expect((await cli(['secrets', 'disable', 'tmp'])).code).to.equal(0);
    expect((await cli(['secrets', 'list'])).stdout).to.not.contain('tmp/');
    expect((await cli(['auth', 'list'])).stdout).to.match(/token\/\s+token/);
    const dup = await cli(['secrets', 'enable', '-path=crypto/eu', 'transit']);
    expect(dup.code).to.equal(2);
    expect(dup.stderr).to.match(/^Error enabling transit: Error making API request\.\n\nURL: PUT http/);
    expect(dup.stderr).to.contain('Code: 409');
  });

  it('write/read/list/delete with k=v, k=@file and k=- arguments', async () => {
    expect((await cli(['write', 'crypto/eu/keys/app', 'type=aes256-gcm96'])).code).to.equal(0);
    const file = path.join(home.path, 'plain.txt');
    await writeFile(file, Buffer.from('from a file').toString('base64'));
    const enc = await cli(['write', '-format=json', 'crypto/eu/encrypt/app', `plaintext=@${file}`]);
    const ciphertext = JSON.parse(enc.stdout).data.ciphertext as string;
    expect(ciphertext).to.match(/^vault:v1:/);
    const dec = await cli(['write', '-format=json', 'crypto/eu/decrypt/app', 'ciphertext=-'], ciphertext);
    expect(Buffer.from(JSON.parse(dec.stdout).data.plaintext, 'base64').toString()).to.equal('from a file');
    const read = await cli(['read', 'crypto/eu/keys/app']);
    expect(read.stdout).to.match(/^Key {2,}Value\n--- {2,}-----\n/);
    expect(read.stdout).to.match(/latest_version\s+1\n/);
    expect((await cli(['list', 'crypto/eu/keys'])).stdout).to.equal('Keys\n----\napp\n');
    await cli(['write', 'crypto/eu/keys/app/config', 'deletion_allowed=true']);
    const deleted = await cli(['delete', 'crypto/eu/keys/app']);
    expect(deleted.stdout).to.equal('Success! Data deleted (if it existed) at: crypto/eu/keys/app\n');
    const gone = await cli(['read', 'crypto/eu/keys/app']);
    expect(gone.code).to.equal(2);
    expect(gone.stdout).to.equal('');
    expect(gone.stderr).to.equal('No value found at crypto/eu/keys/app\n');
  });

  it('write prints "Success! Data written to" for an empty answer in table format, and nothing in JSON', async () => {
    const rules = 'policy=path "x" { capabilities = ["read"] }';
    const table = await cli(['write', '/sys/policies/acl/quiet/', rules]);
    expect(table.stdout).to.equal('Success! Data written to: sys/policies/acl/quiet\n');
    const json = await cli(['write', '-format=json', 'sys/policies/acl/quiet', rules]);
    expect(json.code).to.equal(0);
    expect(json.stdout).to.equal('');
  });

  it('list answers "No value found" (exit 2) for a path with nothing under it; JSON prints {}', async () => {
    const table = await cli(['list', 'crypto/eu/nothing/']);
    expect(table.code).to.equal(2);
    expect(table.stderr).to.equal('No value found at crypto/eu/nothing\n');
    const json = await cli(['list', '-format=json', 'crypto/eu/nothing']);
    expect(json.code).to.equal(2);
    expect(JSON.parse(json.stdout)).to.deep.equal({});
  });

  it('policy write/read/list/delete', async () => {
    const policy = 'path "crypto/eu/encrypt/*" { capabilities = ["update"] }\n';
    expect((await cli(['policy', 'write', 'enc', '-'], policy)).code).to.equal(0);
    expect((await cli(['policy', 'read', 'enc'])).stdout).to.equal(policy);
    expect(JSON.parse((await cli(['policy', 'read', '-format=json', 'enc'])).stdout)).to.deep.equal({ policy });
    expect((await cli(['policy', 'list'])).stdout.split('\n')).to.include.members(['default', 'enc', 'root']);
    expect(JSON.parse((await cli(['policy', 'list', '-format=json'])).stdout)).to.include.members(['default', 'enc', 'root']);
    const bad = await cli(['policy', 'write', 'broken', '-'], 'path "x" { capabilities = ');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/^Error uploading policy: /);
    expect(bad.stderr).to.match(/line \d+/);
    expect((await cli(['policy', 'delete', 'enc'])).code).to.equal(0);
  });

  it('token create/lookup/renew/revoke', async () => {
    const created = JSON.parse((await cli(['token', 'create', '-policy=default', '-ttl=1h', '-format=json'])).stdout);
    const token = created.auth.client_token as string;
    const lookup = await cli(['token', 'lookup', token]);
    expect(lookup.stdout).to.match(/creation_ttl\s+1h\n/);
    expect(lookup.stdout).to.match(/policies\s+\[default\]\n/);
    expect((await cli(['token', 'lookup', '-field=creation_ttl', token])).stdout).to.equal('3600');
    const renewed = JSON.parse((await cli(['token', 'renew', token, '-increment=30m', '-format=json'])).stdout);
    expect(renewed.auth.lease_duration).to.equal(1800);
    expect((await cli(['token', 'renew', token, '-increment=30m'])).stdout).to.match(/token_duration\s+30m\n/);
    expect((await cli(['token', 'revoke', token])).code).to.equal(0);
    const revoked = await cli(['token', 'lookup', token]);
    expect(revoked.code).to.equal(2);
    expect(revoked.stderr).to.match(/^Error looking up token: /);
    const self = await cli(['token', 'lookup', '-format=json']);
    expect(JSON.parse(self.stdout).data.policies).to.deep.equal(['root']);
  });

  it('token capabilities lists the current token\'s capabilities, or another token\'s, sorted', async () => {
    const mine = await cli(['token', 'capabilities', 'sys/mounts']);
    expect(mine.stdout).to.equal('root\n');
    await cli(['policy', 'write', 'caps', '-'], 'path "crypto/eu/encrypt/*" { capabilities = ["update", "create", "read"] }\n');
    const other = JSON.parse((await cli(['token', 'create', '-policy=caps', '-format=json'])).stdout).auth.client_token as string;
    expect((await cli(['token', 'capabilities', other, 'crypto/eu/encrypt/app'])).stdout).to.equal('create, read, update\n');
    expect(JSON.parse((await cli(['token', 'capabilities', '-format=json', other, 'crypto/eu/encrypt/app'])).stdout)).to.deep.equal(['create', 'read', 'update']);
    expect((await cli(['token', 'capabilities', other, 'sys/mounts'])).stdout).to.equal('deny\n');
  });

  it('path-help prints the path\'s help text, or with -format=json its OpenAPI document', async () => {
    const help = await cli(['path-help', 'crypto/eu/encrypt/app']);
    expect(help.code, help.stderr).to.equal(0);
    expect(help.stdout).to.match(/^## encrypt\//);
    const openapi = JSON.parse((await cli(['path-help', '-format=json', 'sys/mounts'])).stdout);
    expect(openapi.paths).to.have.property('mounts');
    const none = await cli(['path-help', 'nowhere/at/all']);
    expect(none.code).to.equal(2);
    expect(none.stderr).to.match(/^Error retrieving help: /);
  });

  it('operator step-down answers success on a single node, which stays active', async () => {
    const run = await cli(['operator', 'step-down']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.equal(`Success! Stepped down: ${server.address}\n`);
    const status = await cli(['status', '-format=json']);
    expect(JSON.parse(status.stdout).sealed).to.equal(false);
  });

  it('operator step-down needs sudo: a token without it gets the server\'s 403, exit 2', async () => {
    const plain = JSON.parse((await cli(['token', 'create', '-policy=default', '-format=json'])).stdout).auth.client_token as string;
    const run = await cli(['operator', 'step-down'], undefined, { VAULT_TOKEN: plain });
    expect(run.code).to.equal(2);
    expect(run.stderr).to.match(/^Error stepping down: /);
    expect(run.stderr).to.contain('Code: 403');
  });

  it('answers usage errors with exit 1 and an unknown command with 127, as vault does', async () => {
    expect((await cli(['frobnicate'])).code).to.equal(127);
    expect((await cli(['read'])).code).to.equal(1);
    expect((await cli(['write', 'x', 'novalue'])).code).to.equal(1);
    expect((await cli(['read', '-format=xml', 'sys/mounts'])).stderr).to.contain('Invalid output format: xml');
    expect((await cli(['--help'])).code).to.equal(0);
  });

  it('operator seal seals the server; path-help then says it needs it unsealed', async () => {
    expect((await cli(['operator', 'seal'])).code).to.equal(0);
    expect((await cli(['status'])).code).to.equal(2);
    const help = await cli(['path-help', 'sys/mounts']);
    expect(help.code).to.equal(2);
    expect(help.stderr).to.contain('needs it unsealed');
  });
});
