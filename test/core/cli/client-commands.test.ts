/** The CLI as a user runs it (a subprocess) against a real server, for every command group. */
import { expect } from 'chai';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, tempDir } from '../../helpers/server.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';
import { octal } from '../../helpers/files.js';
import { runProcess, type ProcessRun } from '../../helpers/process.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../bin/keywarden.js');

describe('keywarden CLI commands', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let home: { path: string; remove: () => Promise<void> };
  let env: NodeJS.ProcessEnv;

  const cli = (args: string[], input?: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<ProcessRun> =>
    runProcess(process.execPath, [BIN, ...args], { env: { ...env, ...extraEnv }, ...(input !== undefined ? { input } : {}) });

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
    expect(none.code).to.equal(2);
    const first = await cli(['operator', 'unseal', keys[0]!]);
    expect(first.stdout).to.match(/Unseal Progress\s+1\/2/);
    const bad = await cli(['operator', 'unseal', 'not-a-key']);
    expect(bad.code).to.equal(1);
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
    expect(bad.code).to.equal(1);
  });

  it('login keeps the token file 0600, also one that already existed with mode 0644', async () => {
    const file = path.join(home.path, 'shared-token');
    await writeFile(file, 'an older token', { mode: 0o644 });
    const login = await cli(['login', rootToken], undefined, { KEYWARDEN_TOKEN_FILE: file });
    expect(login.code, login.stderr).to.equal(0);
    expect((await readFile(file, 'utf8')).trim()).to.equal(rootToken);
    expect(octal((await stat(file)).mode & 0o7777)).to.equal('0600');
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
    expect(dup.code).to.equal(1);
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
    expect(read.stdout).to.match(/latest_version\s+1/);
    expect((await cli(['list', 'crypto/eu/keys'])).stdout).to.contain('app');
    await cli(['write', 'crypto/eu/keys/app/config', 'deletion_allowed=true']);
    expect((await cli(['delete', 'crypto/eu/keys/app'])).code).to.equal(0);
    const gone = await cli(['read', 'crypto/eu/keys/app']);
    expect(gone.code).to.equal(1);
  });

  it('policy write/read/list/delete', async () => {
    const policy = 'path "crypto/eu/encrypt/*" { capabilities = ["update"] }\n';
    expect((await cli(['policy', 'write', 'enc', '-'], policy)).code).to.equal(0);
    expect((await cli(['policy', 'read', 'enc'])).stdout).to.equal(policy);
    expect((await cli(['policy', 'list'])).stdout.split('\n')).to.include.members(['default', 'enc', 'root']);
    const bad = await cli(['policy', 'write', 'broken', '-'], 'path "x" { capabilities = ');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/line \d+/);
    expect((await cli(['policy', 'delete', 'enc'])).code).to.equal(0);
  });

  it('token create/lookup/renew/revoke', async () => {
    const created = JSON.parse((await cli(['token', 'create', '-policy=default', '-ttl=1h', '-format=json'])).stdout);
    const token = created.auth.client_token as string;
    const lookup = await cli(['token', 'lookup', token]);
    expect(lookup.stdout).to.match(/ttl\s+3600/);
    const renewed = JSON.parse((await cli(['token', 'renew', token, '-increment=30m', '-format=json'])).stdout);
    expect(renewed.auth.lease_duration).to.equal(1800);
    expect((await cli(['token', 'revoke', token])).code).to.equal(0);
    expect((await cli(['token', 'lookup', token])).code).to.equal(1);
    const self = await cli(['token', 'lookup', '-format=json']);
    expect(JSON.parse(self.stdout).data.policies).to.deep.equal(['root']);
  });

  it('answers usage errors with exit 2 and an unreachable server with one line and exit 1', async () => {
    expect((await cli(['frobnicate'])).code).to.equal(2);
    expect((await cli(['read'])).code).to.equal(2);
    expect((await cli(['write', 'x', 'novalue'])).code).to.equal(2);
    const down = await cli(['status'], undefined, { KEYWARDEN_ADDR: 'http://127.0.0.1:9' });
    expect(down.code).to.equal(1);
    expect(down.stderr.trim().split('\n')).to.have.length(1);
    expect(down.stderr).to.contain('http://127.0.0.1:9');
  });

  it('operator seal seals the server', async () => {
    expect((await cli(['operator', 'seal'])).code).to.equal(0);
    expect((await cli(['status'])).code).to.equal(2);
  });
});
