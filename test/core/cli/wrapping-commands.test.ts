/**
 * `-wrap-ttl`, `unwrap` and `operator init -pgp-keys` as an operator runs them (in-process,
 * through `main`), against a real server.
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { main } from '../../../core/cli/main.js';
import type { Io } from '../../../core/cli/output.js';
import { initAndUnseal, startTestServer, tempDir } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import { generatePgpKey } from '../../helpers/pgp.js';
import type { RunningServer } from '../../../core/server.js';

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe('response wrapping and PGP init (CLI)', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let home: { path: string; remove: () => Promise<void> };
  let rootToken: string;

  const cli = async (args: string[], options: { token?: string; env?: NodeJS.ProcessEnv; address?: string } = {}): Promise<Run> => {
    let stdout = '';
    let stderr = '';
    const io: Io = {
      out: (text) => void (stdout += text),
      err: (text) => void (stderr += text),
      stdin: async () => '',
      secret: async () => undefined,
    };
    const env = {
      HOME: home.path,
      KEYWARDEN_ADDR: options.address ?? server.address,
      KEYWARDEN_TOKEN: options.token ?? rootToken,
      ...options.env,
    };
    const code = await main(args, io, env);
    return { code, stdout, stderr };
  };

  before(async () => {
    server = await startTestServer();
    home = await tempDir();
    ({ rootToken } = await initAndUnseal(server, 1, 1));
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  it('write -wrap-ttl prints vault\'s wrapping rows; unwrap TOKEN prints the data once', async () => {
    const wrapped = await cli(['write', '-wrap-ttl=5m', 'sys/wrapping/wrap', 'db_password=s3cret']);
    expect(wrapped.code, wrapped.stderr).to.equal(0);
    expect(wrapped.stdout).to.match(/^wrapping_token:\s+hvs\.|^wrapping_token:\s+\S+/m);
    expect(wrapped.stdout).to.match(/^wrapping_token_ttl:\s+5m$/m);
    expect(wrapped.stdout).to.match(/^wrapping_token_creation_path:\s+sys\/wrapping\/wrap$/m);
    expect(wrapped.stdout).not.to.contain('s3cret');
    const token = /^wrapping_token:\s+(\S+)$/m.exec(wrapped.stdout)![1]!;

    const unwrapped = await cli(['unwrap', '-format=json', token]);
    expect(unwrapped.code, unwrapped.stderr).to.equal(0);
    expect(JSON.parse(unwrapped.stdout).data).to.deep.equal({ db_password: 's3cret' });
    const again = await cli(['unwrap', token]);
    expect(again.code).to.equal(2);
    expect(again.stderr).to.match(/^Error unwrapping: /);
  });

  it('token create -wrap-ttl wraps the new token; unwrap with the wrapping token as the request token hands it over', async () => {
    const wrapped = await cli(['token', 'create', '-policy=default', '-wrap-ttl=120', '-format=json']);
    expect(wrapped.code, wrapped.stderr).to.equal(0);
    const body = JSON.parse(wrapped.stdout);
    expect(body.auth).to.equal(undefined);
    expect(body.wrap_info).to.include({ ttl: 120, creation_path: 'auth/token/create' });
    expect(body.wrap_info.wrapped_accessor).to.be.a('string').and.not.equal('');

    const field = await cli(['unwrap', '-field=token'], { token: body.wrap_info.token });
    expect(field.code, field.stderr).to.equal(0);
    const minted = field.stdout.trim();
    const lookup = await cli(['token', 'lookup', '-format=json'], { token: minted });
    expect(lookup.code, lookup.stderr).to.equal(0);
    expect(JSON.parse(lookup.stdout).data.accessor).to.equal(body.wrap_info.wrapped_accessor);
  });

  it('-field picks a wrap_info field; VAULT_WRAP_TTL wraps when the flag is not given; list wraps too', async () => {
    const accessor = await cli(['read', '-field=wrapping_accessor', 'auth/token/lookup-self'], { env: { VAULT_WRAP_TTL: '90s' } });
    expect(accessor.code, accessor.stderr).to.equal(0);
    expect(accessor.stdout).to.match(/^\S+$/);
    const ttl = await cli(['read', '-field=wrapping_token_ttl', 'auth/token/lookup-self'], { env: { VAULT_WRAP_TTL: '90s' } });
    expect(ttl.stdout).to.equal('90');

    const listed = await cli(['list', '-wrap-ttl=1m', '-format=json', 'sys/policies/acl']);
    expect(listed.code, listed.stderr).to.equal(0);
    const wrapToken = JSON.parse(listed.stdout).wrap_info.token as string;
    const keys = await cli(['unwrap', '-format=json', wrapToken]);
    expect(JSON.parse(keys.stdout).data.keys).to.include('default');
  });

  it('a malformed -wrap-ttl is the server\'s 400 naming the header; -wrap-ttl on a token login is a usage error', async () => {
    const bad = await cli(['read', '-wrap-ttl=soon', 'auth/token/lookup-self']);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain('X-Vault-Wrap-TTL');
    const login = await cli(['login', '-wrap-ttl=1m', rootToken]);
    expect(login.code).to.equal(1);
    expect(login.stderr).to.contain('-wrap-ttl');
  });

  describe('operator init -pgp-keys', () => {
    let fresh: RunningServer & { client: TestClient };
    before(async () => {
      fresh = await startTestServer();
    });
    after(() => fresh.close());

    it('refuses a key count that does not match -key-shares before asking the server', async () => {
      const key = await generatePgpKey('alice');
      const file = path.join(home.path, 'alice.asc');
      await writeFile(file, key.armoredPublicKey);
      const run = await cli(['operator', 'init', '-key-shares=2', '-key-threshold=2', `-pgp-keys=${file}`], { address: fresh.address });
      expect(run.code).to.equal(1);
      expect(run.stderr).to.contain('-pgp-keys names 1 keys');
      expect((await fresh.client.get('sys/init')).body.initialized).to.equal(false);
    });

    it('encrypts each share to its holder and the root token to its key; the decrypted shares unseal', async () => {
      const holders = await Promise.all(['alice', 'bob', 'carol'].map((name) => generatePgpKey(name)));
      const files = await Promise.all(
        holders.map(async (key, i) => {
          const file = path.join(home.path, `holder-${i}.asc`);
          // One armored, the others base64 of the binary key, as `gpg --export | base64` gives it.
          await writeFile(file, i === 0 ? key.armoredPublicKey : key.publicKeyBase64);
          return file;
        }),
      );
      const rootKey = await generatePgpKey('root');
      const rootFile = path.join(home.path, 'root.asc');
      await writeFile(rootFile, rootKey.armoredPublicKey);

      const run = await cli(
        ['operator', 'init', '-key-shares=3', '-key-threshold=2', `-pgp-keys=${files.join(',')}`, `-root-token-pgp-key=${rootFile}`, '-format=json'],
        { address: fresh.address },
      );
      expect(run.code, run.stderr).to.equal(0);
      const body = JSON.parse(run.stdout);
      expect(body.unseal_keys_b64).to.have.length(3);
      const shares = await Promise.all(body.unseal_keys_b64.map((share: string, i: number) => holders[i]!.decrypt(share)));
      for (const share of shares.slice(1)) {
        const res = await fresh.client.put('sys/unseal', { key: share });
        expect(res.status, res.text).to.equal(200);
      }
      expect((await fresh.client.get('sys/seal-status')).body.sealed).to.equal(false);
      const token = await rootKey.decrypt(body.root_token);
      const self = await new TestClient(fresh.address, token).get('auth/token/lookup-self');
      expect(self.status, self.text).to.equal(200);
      expect(self.body.data.policies).to.deep.equal(['root']);
    });
  });
});
