/**
 * transit's newer key types through the generic CLI (`keywarden write`), as a user pastes Vault's
 * commands: the CLI in a subprocess against a real server over HTTP.
 */
import { expect } from 'chai';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { startUnsealedServer, tempDir } from '../../helpers/server.js';
import { runCli, type CliRun } from '../../helpers/cli.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

describe('transit from the CLI', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let home: Awaited<ReturnType<typeof tempDir>>;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]): Promise<CliRun> => runCli(args, env);
  const json = async (...args: string[]) => {
    const run = await cli('write', '-format=json', ...args);
    expect(run.code, run.stderr).to.equal(0);
    return JSON.parse(run.stdout).data;
  };
  const b64 = (text: string) => Buffer.from(text).toString('base64');

  before(async () => {
    server = await startUnsealedServer();
    home = await tempDir();
    env = { PATH: process.env.PATH, HOME: home.path, VAULT_ADDR: server.address, VAULT_TOKEN: server.rootToken };
    expect((await cli('secrets', 'enable', 'transit')).code).to.equal(0);
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  it('makes an aes256-cmac key, CMACs with it (url_mac_length too) and verifies the CMAC', async () => {
    expect((await cli('write', 'transit/keys/mac', 'type=aes256-cmac')).code).to.equal(0);
    const { cmac } = await json('transit/cmac/mac', `input=${b64('hello')}`);
    expect(cmac).to.match(/^vault:v1:/);
    expect((await json('transit/verify/mac', `input=${b64('hello')}`, `cmac=${cmac}`)).valid).to.equal(true);
    const short = (await json('transit/cmac/mac/8', `input=${b64('hello')}`)).cmac as string;
    expect(Buffer.from(short.split(':')[2]!, 'base64')).to.have.length(8);
    expect((await json('transit/verify/mac', `input=${b64('hello')}`, `cmac=${short}`, 'mac_length=8')).valid).to.equal(true);
    const refused = await cli('write', 'transit/cmac/mac', `input=${b64('hello')}`, 'mac_length=17');
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.contain('mac_length 17 is invalid');
  });

  it('signs Ed25519ph of a SHA-512 digest with a signature_context, and verifies it', async () => {
    expect((await cli('write', 'transit/keys/ed', 'type=ed25519')).code).to.equal(0);
    const digest = createHash('sha512').update('hello').digest('base64');
    const context = b64('app');
    const { signature } = await json('transit/sign/ed/sha2-512', `input=${digest}`, 'prehashed=true', `signature_context=${context}`);
    expect(signature).to.match(/^vault:v1:/);
    expect((await json('transit/verify/ed/sha2-512', `input=${digest}`, 'prehashed=true', `signature_context=${context}`, `signature=${signature}`)).valid).to.equal(true);
    expect((await json('transit/verify/ed/sha2-512', `input=${digest}`, 'prehashed=true', `signature=${signature}`)).valid).to.equal(false);
  });

  it('makes an x25519 key and derives a key with a peer\'s raw X25519 public key, as Alice and Bob do', async () => {
    expect((await cli('write', 'transit/keys/agree', 'type=x25519')).code).to.equal(0);
    const peer = generateKeyPairSync('x25519');
    const peerRaw = Buffer.from(peer.publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
    const made = await cli('write', 'transit/derive-key/agreed', 'base_key_name=agree', `peer_public_key=${peerRaw}`);
    expect(made.code, made.stderr).to.equal(0);
    const read = await cli('read', '-format=json', 'transit/keys/agreed');
    expect(JSON.parse(read.stdout).data).to.include({ type: 'aes256-gcm96', imported_key: true });
    const zero = await cli('write', 'transit/derive-key/zero', 'base_key_name=agree', `peer_public_key=${Buffer.alloc(32).toString('base64')}`);
    expect(zero.code).to.equal(2);
    expect(zero.stderr).to.contain('small order');
  });
});
