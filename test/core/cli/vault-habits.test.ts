/**
 * The vault CLI's habits, which people bring with them when they paste commands from Vault's docs:
 * flags, whole JSON bodies, keys on standard input, `secrets tune`, `version`, `print token`, help
 * and errors in single-dash flags, vault's exit codes, and messages that say what happened and what
 * to do (no token, a token the server does not accept, a kv version 2 path, a body over the limit).
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startTestServer, startUnsealedServer, tempDir } from '../../helpers/server.js';
import { freePort } from '../../helpers/net.js';
import { runCli, type CliRun } from '../../helpers/cli.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

/** A transit batch of `count` short items, as JSON text: quotes are a fifth of it. */
function batchOf(count: number): string {
  return JSON.stringify(Array.from({ length: count }, () => ({ plaintext: 'aGk=' })));
}

describe('keywarden CLI: the vault CLI\'s habits', function () {
  this.timeout(60_000);
  /** A small max_request_size, so a batch can be over it as an escaped string and under it as JSON. */
  const LIMIT = 4096;
  let server: RunningServer & { client: TestClient; rootToken: string };
  let home: Awaited<ReturnType<typeof tempDir>>;
  let env: NodeJS.ProcessEnv;
  const cli = (args: string[], input?: string, extra: NodeJS.ProcessEnv = {}): Promise<CliRun> => runCli(args, { ...env, ...extra }, input);

  before(async () => {
    server = await startUnsealedServer({ maxRequestSize: LIMIT });
    home = await tempDir();
    env = { PATH: process.env.PATH, HOME: home.path, VAULT_ADDR: server.address, VAULT_TOKEN: server.rootToken };
    expect((await cli(['secrets', 'enable', 'transit'])).code).to.equal(0);
    expect((await cli(['secrets', 'enable', '-version=2', '-path=secret', 'kv'])).code).to.equal(0);
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  describe('write', () => {
    it('refuses a write with no data unless -f or -force says so, as vault does, and then writes', async () => {
      const bare = await cli(['write', 'transit/keys/forced']);
      expect(bare.code).to.equal(1);
      expect(bare.stderr).to.contain('Must supply data or use -force');
      expect((await server.client.get('transit/keys/forced')).status).to.equal(404);

      const short = await cli(['write', '-f', 'transit/keys/forced']);
      expect(short.code, short.stderr).to.equal(0);
      const long = await cli(['write', '-force', 'transit/keys/forced-too']);
      expect(long.code, long.stderr).to.equal(0);
      expect((await server.client.get('transit/keys/forced')).body.data.type).to.equal('aes256-gcm96');
      expect((await server.client.get('transit/keys/forced-too')).status).to.equal(200);
    });

    it('takes the whole request body as a JSON object from @file.json or from - (standard input)', async () => {
      const file = path.join(home.path, 'key.json');
      await writeFile(file, JSON.stringify({ type: 'ed25519', exportable: true }));
      const fromFile = await cli(['write', 'transit/keys/from-file', `@${file}`]);
      expect(fromFile.code, fromFile.stderr).to.equal(0);
      const key = (await server.client.get('transit/keys/from-file')).body.data;
      expect(key.type).to.equal('ed25519');
      expect(key.exportable).to.equal(true);

      const fromStdin = await cli(['write', '-format=json', 'transit/encrypt/from-file', '-'], '{"plaintext":"aGk="}');
      // ed25519 cannot encrypt: the fields reached the server as fields (its refusal names the key type).
      expect(fromStdin.code).to.equal(2);
      expect(fromStdin.stderr).to.contain('ed25519');
      const encrypt = await cli(['write', '-format=json', 'transit/encrypt/forced', '-'], JSON.stringify({ plaintext: 'aGk=' }));
      expect(encrypt.code, encrypt.stderr).to.equal(0);
      expect(JSON.parse(encrypt.stdout).data.ciphertext).to.match(/^vault:v1:/);
    });

    it('refuses a body file that is not a JSON object, naming the file', async () => {
      const file = path.join(home.path, 'list.json');
      await writeFile(file, '[1, 2]');
      const list = await cli(['write', 'transit/keys/x', `@${file}`]);
      expect(list.code).to.equal(1);
      expect(list.stderr).to.contain(`${file} must hold a JSON object`);
      const broken = await cli(['write', 'transit/keys/x', '-'], '{"type": ');
      expect(broken.code).to.equal(1);
      expect(broken.stderr).to.contain('standard input is not valid JSON');
    });

    it('sends batch_input=@file as the JSON list it holds, not as an escaped string', async () => {
      // Under the listener's limit as JSON; as one escaped string (a backslash before every quote) over it.
      const batch = batchOf(180);
      expect(batch.length).to.be.lessThan(LIMIT - 100);
      expect(JSON.stringify(batch).length).to.be.greaterThan(LIMIT);
      const file = path.join(home.path, 'batch.json');
      await writeFile(file, batch);
      const run = await cli(['write', '-format=json', 'transit/encrypt/forced', `batch_input=@${file}`]);
      expect(run.code, run.stderr).to.equal(0);
      expect(JSON.parse(run.stdout).data.batch_results).to.have.length(180);
    });

    it('says which limit and which setting a body over max_request_size broke', async () => {
      const file = path.join(home.path, 'too-big.json');
      await writeFile(file, batchOf(500));
      const run = await cli(['write', 'transit/encrypt/forced', `batch_input=@${file}`]);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.contain('Code: 413');
      expect(run.stderr).to.contain(`over ${LIMIT} bytes`);
      expect(run.stderr).to.contain('max_request_size');
    });

    it('on a kv version 2 mount says to use kv put, instead of printing the raw answer', async () => {
      const run = await cli(['write', 'secret/app/x', 'a=b']);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.contain('secret/ is a kv version 2 mount');
      expect(run.stderr).to.contain('keywarden kv put secret/app/x');
      expect(run.stderr).to.not.contain('request_id');
      expect(run.stderr).to.not.contain('{');
    });
  });

  describe('secrets tune and auth tune', () => {
    it('change only the settings given, and say so as vault does', async () => {
      const tune = await cli(['secrets', 'tune', '-max-lease-ttl=2h', '-description=orders', '-audit-non-hmac-request-keys=name,context', 'transit']);
      expect(tune.code, tune.stderr).to.equal(0);
      expect(tune.stdout).to.equal('Success! Tuned the secrets engine at: transit/\n');
      const settings = (await server.client.get('sys/mounts/transit/tune')).body.data;
      expect(settings.max_lease_ttl).to.equal(7200);
      expect(settings.description).to.equal('orders');
      expect(settings.audit_non_hmac_request_keys).to.deep.equal(['name', 'context']);

      const auth = await cli(['auth', 'tune', '-default-lease-ttl=30m', 'token']);
      expect(auth.code, auth.stderr).to.equal(0);
      expect(auth.stdout).to.equal('Success! Tuned the auth method at: auth/token/\n');
      expect((await server.client.get('sys/auth/token/tune')).body.data.default_lease_ttl).to.equal(1800);
    });

    it('refuses a tune that gives no setting, before asking the server', async () => {
      const run = await cli(['secrets', 'tune', 'transit']);
      expect(run.code).to.equal(1);
      expect(run.stderr).to.contain('nothing to tune');
    });
  });

  describe('version and print token', () => {
    it('version and -version print the version as vault prints its own', async () => {
      for (const args of [['version'], ['-version'], ['-v']]) {
        const run = await cli(args);
        expect(run.code, args.join(' ')).to.equal(0);
        expect(run.stdout).to.match(/^Keywarden v\d+\.\d+\.\d+\n$/);
      }
    });

    it('print token prints the token the commands would send: the variable, else the token file, else nothing', async () => {
      expect((await cli(['print', 'token'])).stdout).to.equal(`${server.rootToken}\n`);
      const file = path.join(home.path, 'token-file');
      await writeFile(file, 'hvs.from-the-file\n');
      const fromFile = await cli(['print', 'token'], undefined, { VAULT_TOKEN: '', KEYWARDEN_TOKEN_FILE: file });
      expect(fromFile.stdout).to.equal('hvs.from-the-file\n');
      const none = await cli(['print', 'token'], undefined, { VAULT_TOKEN: '', KEYWARDEN_TOKEN_FILE: path.join(home.path, 'absent') });
      expect(none.code).to.equal(0);
      expect(none.stdout).to.equal('\n');
    });
  });

  describe('help and errors', () => {
    it('help lists flags single-dashed, as the README documents them', async () => {
      const help = await cli(['read', '-help']);
      expect(help.code).to.equal(0);
      expect(help.stdout).to.match(/^\s+-address <url>/m);
      expect(help.stdout).to.match(/^\s+-format <format>/m);
      expect(help.stdout).to.match(/^\s+-h, -help/m);
      expect(help.stdout).to.not.match(/--[a-z]/);
      const write = await cli(['write', '-help']);
      expect(write.stdout).to.match(/^\s+-f, -force/m);
    });

    it('an unknown or incomplete flag is named single-dashed in the error', async () => {
      const unknown = await cli(['read', '-adress=http://x', 'sys/health']);
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr).to.contain("unknown option '-adress=http://x'");
      expect(unknown.stderr).to.not.match(/--[a-z]/);
      const missing = await cli(['read', 'sys/health', '-format']);
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.contain("option '-format <format>' argument missing");
    });
  });

  describe('exit codes, as vault documents them (https://developer.hashicorp.com/vault/docs/commands#exit-codes)', () => {
    it('a server that cannot be reached: 2 from read and write, 1 from status (which keeps 2 for "sealed")', async () => {
      const nowhere = `http://127.0.0.1:${await freePort()}`;
      const read = await cli(['read', 'sys/health'], undefined, { VAULT_ADDR: nowhere });
      expect(read.code).to.equal(2);
      expect(read.stderr).to.contain('connection refused');
      const write = await cli(['write', 'transit/keys/x', 'type=aes256-gcm96'], undefined, { VAULT_ADDR: nowhere });
      expect(write.code).to.equal(2);
      const status = await cli(['status'], undefined, { VAULT_ADDR: nowhere });
      expect(status.code).to.equal(1);
      expect(status.stderr).to.contain('connection refused');
    });

    it('server with neither -dev nor -config is a usage error: 1, naming both', async () => {
      const run = await cli(['server']);
      expect(run.code).to.equal(1);
      expect(run.stderr).to.contain('-dev');
      expect(run.stderr).to.contain('-config PATH');
    });
  });

  describe('tokens', () => {
    it('with no token at all, says so and how to get one', async () => {
      const run = await cli(['read', 'transit/keys/forced'], undefined, { VAULT_TOKEN: '', KEYWARDEN_TOKEN_FILE: path.join(home.path, 'absent') });
      expect(run.code).to.equal(2);
      expect(run.stderr).to.match(/^Error reading transit\/keys\/forced: no token: /);
      expect(run.stderr).to.contain('keywarden login');
      expect(run.stderr).to.contain('VAULT_TOKEN');
      const kv = await cli(['kv', 'get', 'secret/app'], undefined, { VAULT_TOKEN: '', KEYWARDEN_TOKEN_FILE: path.join(home.path, 'absent') });
      expect(kv.code).to.equal(2);
      expect(kv.stderr).to.contain('no token: ');
      expect(kv.stderr).to.not.contain('preflight');
    });

    it('with a token the server does not accept, says that it is not valid and where it came from', async () => {
      const run = await cli(['read', 'transit/keys/forced'], undefined, { VAULT_TOKEN: 'hvs.mistyped0000000000000000' });
      expect(run.code).to.equal(2);
      expect(run.stderr).to.contain('Code: 403');
      expect(run.stderr).to.contain('The server does not accept the token from VAULT_TOKEN');
      expect(run.stderr).to.contain('expired or revoked');
      expect(run.stderr).to.not.contain('hvs.mistyped');
    });

    it('with a valid token its policies refuse, says the token is valid and names its policies', async () => {
      await server.client.put('sys/policies/acl/encrypt-only', { policy: 'path "transit/encrypt/*" { capabilities = ["update"] }' });
      const token = (await server.client.post('auth/token/create', { policies: ['encrypt-only'] })).body.auth.client_token as string;
      const allowed = await cli(['write', 'transit/encrypt/forced', 'plaintext=aGk='], undefined, { VAULT_TOKEN: token });
      expect(allowed.code, allowed.stderr).to.equal(0);
      const refused = await cli(['read', 'transit/keys/forced'], undefined, { VAULT_TOKEN: token });
      expect(refused.code).to.equal(2);
      expect(refused.stderr).to.contain('Code: 403');
      expect(refused.stderr).to.contain('The token from VAULT_TOKEN is valid, but its policies (default, encrypt-only) do not allow GET on transit/keys/forced');
    });

    it('a refused login is reported as the server worded it, not as a missing token', async () => {
      // A server refusing everything with 403, as one refuses a login whose identity no role binds.
      const seen: string[] = [];
      const refusing = http.createServer((req, res) => {
        seen.push(`${req.method} ${req.url}`);
        res.writeHead(403, { 'Content-Type': 'application/json' }).end('{"errors":["permission denied"]}');
      });
      await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
      try {
        const address = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
        const run = await cli(['write', 'auth/cloud/login', 'role=orders-app'], undefined, { VAULT_ADDR: address, VAULT_TOKEN: '', KEYWARDEN_TOKEN_FILE: path.join(home.path, 'absent') });
        expect(run.code).to.equal(2);
        expect(run.stderr).to.contain('* permission denied');
        expect(run.stderr).to.not.contain('no token');
        expect(seen).to.deep.equal(['PUT /v1/auth/cloud/login']);
      } finally {
        await new Promise((resolve) => refusing.close(resolve));
      }
    });
  });
});

describe('keywarden CLI: operator unseal reads the key from standard input', function () {
  this.timeout(60_000);
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let home: Awaited<ReturnType<typeof tempDir>>;
  let env: NodeJS.ProcessEnv;
  let keys: string[];

  before(async () => {
    server = await startTestServer();
    home = await tempDir();
    env = { PATH: process.env.PATH, HOME: home.path, VAULT_ADDR: server.address };
    const init = await runCli(['operator', 'init', '-key-shares=3', '-key-threshold=2', '-format=json'], env);
    keys = JSON.parse(init.stdout).unseal_keys_b64;
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  it('from a pipe when no key is given (echo KEY | keywarden operator unseal), and with "-"', async () => {
    const piped = await runCli(['operator', 'unseal'], env, `${keys[0]}\n`);
    expect(piped.code, piped.stderr).to.equal(0);
    expect(piped.stdout).to.match(/Unseal Progress\s+1\/2/);
    const dash = await runCli(['operator', 'unseal', '-'], env, `${keys[1]}\n`);
    expect(dash.code, dash.stderr).to.equal(0);
    expect(dash.stdout).to.match(/Sealed\s+false/);
  });

  it('with nothing on standard input, says how to give the key', async () => {
    const run = await runCli(['operator', 'unseal'], env, '');
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain('no unseal key given');
    expect(run.stderr).to.contain('"-"');
  });
});
