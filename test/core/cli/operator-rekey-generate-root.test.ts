/**
 * `operator rekey` and `operator generate-root` as an operator runs them (in-process, through
 * `main`), against a real server.
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

describe('operator rekey and generate-root (CLI)', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient };
  let home: { path: string; remove: () => Promise<void> };
  let keys: string[];
  let rootToken: string;

  const cli = async (args: string[], options: { token?: string; stdin?: string } = {}): Promise<Run> => {
    let stdout = '';
    let stderr = '';
    const io: Io = {
      out: (text) => void (stdout += text),
      err: (text) => void (stderr += text),
      stdin: async () => options.stdin ?? '',
      secret: async () => undefined,
    };
    const env = { HOME: home.path, KEYWARDEN_ADDR: server.address, ...(options.token ? { KEYWARDEN_TOKEN: options.token } : {}) };
    const code = await main(args, io, env);
    return { code, stdout, stderr };
  };

  before(async () => {
    server = await startTestServer();
    home = await tempDir();
    ({ keys, rootToken } = await initAndUnseal(server, 3, 2));
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  it('rekeys: -init, then current shares with -nonce (one from standard input); the new shares unseal', async () => {
    const init = await cli(['operator', 'rekey', '-init', '-key-shares=2', '-key-threshold=2', '-format=json'], { token: rootToken });
    expect(init.code, init.stderr).to.equal(0);
    const { nonce } = JSON.parse(init.stdout);
    const first = await cli(['operator', 'rekey', `-nonce=${nonce}`, keys[0]!], { token: rootToken });
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.match(/Rekey Progress\s+1\/2/);
    const done = await cli(['operator', 'rekey', `-nonce=${nonce}`, '-'], { token: rootToken, stdin: `${keys[1]}\n` });
    expect(done.code, done.stderr).to.equal(0);
    const newKeys = [...done.stdout.matchAll(/^Key \d: (\S+)$/gm)].map((m) => m[1]!);
    expect(newKeys).to.have.length(2);
    expect(done.stdout).to.contain(`Operation nonce: ${nonce}`);

    expect((await server.client.put('sys/seal')).status).to.equal(204);
    for (const key of newKeys) await server.client.put('sys/unseal', { key });
    expect((await server.client.get('sys/seal-status')).body.sealed).to.equal(false);
    keys = newKeys;
  });

  it('rekey refuses a missing nonce, Keybase keys, and calls without a token', async () => {
    await server.client.put('sys/rekey/init', { secret_shares: 1, secret_threshold: 1 });
    const noNonce = await cli(['operator', 'rekey', keys[0]!], { token: rootToken });
    expect(noNonce.code).to.equal(1);
    expect(noNonce.stderr).to.contain('Missing nonce value: specify it via the -nonce flag');
    expect((await cli(['operator', 'rekey', '-cancel'], { token: rootToken })).code).to.equal(0);

    const keybase = await cli(['operator', 'rekey', '-init', '-key-shares=1', '-key-threshold=1', '-pgp-keys=keybase:alice'], { token: rootToken });
    expect(keybase.code).to.equal(1);
    expect(keybase.stderr).to.match(/Keybase keys are not supported/);
    const anonymous = await cli(['operator', 'rekey', '-status']);
    expect(anonymous.code).to.equal(2);
    expect(anonymous.stderr).to.contain('no token: this request needs one');
  });

  it('generates a root token with an OTP and decodes it as vault -decode does; the token works', async () => {
    const init = await cli(['operator', 'generate-root', '-init', '-format=json']);
    expect(init.code, init.stderr).to.equal(0);
    const { otp, nonce } = JSON.parse(init.stdout);
    expect(otp).to.have.length(28);
    await cli(['operator', 'generate-root', `-nonce=${nonce}`, keys[0]!]);
    const done = await cli(['operator', 'generate-root', `-nonce=${nonce}`, keys[1]!]);
    expect(done.code, done.stderr).to.equal(0);
    const encoded = /Encoded Token\s+(\S+)/.exec(done.stdout)![1]!;
    const decoded = await cli(['operator', 'generate-root', `-decode=${encoded}`, `-otp=${otp}`]);
    expect(decoded.code, decoded.stderr).to.equal(0);
    const token = decoded.stdout.trim();
    expect((await new TestClient(server.address).put('sys/decode-token', { encoded_token: encoded, otp })).body.data.token).to.equal(token);
    expect((await new TestClient(server.address, token).get('auth/token/lookup-self')).body.data.policies).to.deep.equal(['root']);
  });

  it('generates a root token encrypted to a PGP key file, with -authenticated', async () => {
    const pgp = await generatePgpKey();
    const file = path.join(home.path, 'operator.asc');
    await writeFile(file, pgp.armoredPublicKey);
    const init = await cli(['operator', 'generate-root', '-authenticated', '-init', `-pgp-key=${file}`, '-format=json'], { token: rootToken });
    expect(init.code, init.stderr).to.equal(0);
    const { nonce, pgp_fingerprint: fingerprint } = JSON.parse(init.stdout);
    expect(fingerprint).to.equal(pgp.fingerprint);
    await cli(['operator', 'generate-root', '-authenticated', `-nonce=${nonce}`, keys[1]!], { token: rootToken });
    const done = await cli(['operator', 'generate-root', '-authenticated', `-nonce=${nonce}`, keys[0]!, '-format=json'], { token: rootToken });
    expect(done.code, done.stderr).to.equal(0);
    const token = await pgp.decrypt(JSON.parse(done.stdout).encoded_token);
    expect((await new TestClient(server.address, token).get('auth/token/lookup-self')).body.data.policies).to.deep.equal(['root']);
  });

  it('generate-root -cancel without a token needs -nonce; with it, the attempt ends', async () => {
    const init = await cli(['operator', 'generate-root', '-init', '-format=json']);
    const { nonce } = JSON.parse(init.stdout);
    const bare = await cli(['operator', 'generate-root', '-cancel']);
    expect(bare.code).to.equal(1);
    expect(bare.stderr).to.contain("cancelling without a token needs the attempt's nonce (-nonce) or one of the current unseal key shares");
    expect((await cli(['operator', 'generate-root', '-status', '-format=json'])).stdout).to.contain('"started": true');
    expect((await cli(['operator', 'generate-root', '-cancel', `-nonce=${nonce}`])).code).to.equal(0);
    expect((await cli(['operator', 'generate-root', '-status', '-format=json'])).stdout).to.contain('"started": false');
  });

  it('generate-root -cancel with a current key share, or with a token with sudo, ends an attempt someone else started', async () => {
    await cli(['operator', 'generate-root', '-init']);
    const wrong = await cli(['operator', 'generate-root', '-cancel', 'ab'.repeat(33)]);
    expect(wrong.code).to.equal(2);
    expect(wrong.stderr).to.contain("'key' is not one of the current key shares");
    expect((await cli(['operator', 'generate-root', '-cancel', keys[1]!])).code).to.equal(0);
    expect((await cli(['operator', 'generate-root', '-status', '-format=json'])).stdout).to.contain('"started": false');

    await cli(['operator', 'generate-root', '-init']);
    const byToken = await cli(['operator', 'generate-root', '-cancel'], { token: rootToken });
    expect(byToken.code, byToken.stderr).to.equal(0);
    expect((await cli(['operator', 'generate-root', '-status', '-format=json'])).stdout).to.contain('"started": false');
  });

  it('generate-root -generate-otp prints an OTP of the server\'s otp_length', async () => {
    const run = await cli(['operator', 'generate-root', '-generate-otp']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout.trim()).to.match(/^[A-Za-z0-9]{28}$/);
  });
});
