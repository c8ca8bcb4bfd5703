/**
 * Key-encapsulation keys from the `keywarden` CLI against a real server: create, read the public
 * key, encrypt, decrypt and a wrapped data key, as a user would type them.
 */
import { expect } from 'chai';
import { startUnsealedServer, tempDir } from '../../helpers/server.js';
import { runCli, type CliRun } from '../../helpers/cli.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

describe('keywarden CLI with ml-kem and mlkem768-x25519 transit keys', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let home: Awaited<ReturnType<typeof tempDir>>;
  let env: NodeJS.ProcessEnv;
  const cli = (args: string[], input?: string): Promise<CliRun> => runCli(args, env, input);
  const json = async (args: string[], input?: string) => {
    const run = await cli(['write', '-format=json', ...args], input);
    expect(run.code, run.stderr).to.equal(0);
    return JSON.parse(run.stdout).data;
  };

  before(async () => {
    server = await startUnsealedServer();
    home = await tempDir();
    env = { PATH: process.env.PATH, HOME: home.path, VAULT_ADDR: server.address, VAULT_TOKEN: server.rootToken };
    expect((await cli(['secrets', 'enable', 'transit'])).code).to.equal(0);
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  for (const [name, args, kemName] of [
    ['pq', ['type=ml-kem', 'parameter_set=1024'], 'ML-KEM-1024'],
    ['hybrid', ['type=mlkem768-x25519'], 'MLKEM768-X25519'],
  ] as const) {
    it(`${kemName}: creates the key, shows its public key, encrypts, decrypts and unwraps a data key`, async () => {
      expect((await cli(['write', `transit/keys/${name}`, ...args])).code).to.equal(0);
      const read = await cli(['read', '-format=json', `transit/keys/${name}`]);
      const key = JSON.parse(read.stdout).data;
      expect(key.keys['1'].name).to.equal(kemName);
      expect(key.keys['1'].public_key).to.match(/^[A-Za-z0-9+/]+=*$/);

      const context = Buffer.from('ledger').toString('base64');
      const sealed = await json([`transit/encrypt/${name}`, `plaintext=${Buffer.from('typed at a shell').toString('base64')}`, `context=${context}`]);
      expect(sealed.ciphertext).to.match(/^vault:v1:/);
      const opened = await json([`transit/decrypt/${name}`, 'ciphertext=-', `context=${context}`], sealed.ciphertext);
      expect(Buffer.from(opened.plaintext, 'base64').toString()).to.equal('typed at a shell');

      const wrapped = await json(['-f', `transit/datakey/wrapped/${name}`]);
      expect(wrapped.plaintext).to.equal(undefined);
      const unwrapped = await json([`transit/decrypt/${name}`, `ciphertext=${wrapped.ciphertext}`]);
      expect(Buffer.from(unwrapped.plaintext, 'base64')).to.have.length(32);
    });
  }
});
