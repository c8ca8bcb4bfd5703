/**
 * Recovery keys through the CLI as an operator uses them (in-process, through `main`), against a
 * server with a static auto seal: `operator init -recovery-shares`, `operator generate-root` with
 * recovery shares, and `operator rekey -target=recovery`.
 */
import { expect } from 'chai';
import { main } from '../../../core/cli/main.js';
import type { Io } from '../../../core/cli/output.js';
import { tempDir } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import { startAutoSealedServer, type AutoSealedServer } from '../../helpers/seal.js';

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe('recovery keys (CLI)', function () {
  this.timeout(60_000);
  let server: AutoSealedServer;
  let home: { path: string; remove: () => Promise<void> };

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

  /** `operator generate-root` from -init to -decode with `shares`; answers the new token. */
  const generateRoot = async (shares: readonly string[]): Promise<string> => {
    const init = await cli(['operator', 'generate-root', '-init', '-format=json']);
    expect(init.code, init.stderr).to.equal(0);
    const { nonce, otp } = JSON.parse(init.stdout) as { nonce: string; otp: string };
    let last: Run = init;
    for (const share of shares) {
      last = await cli(['operator', 'generate-root', `-nonce=${nonce}`, '-format=json', share]);
      expect(last.code, last.stderr).to.equal(0);
    }
    const done = JSON.parse(last.stdout) as { complete: boolean; encoded_token: string };
    expect(done.complete).to.equal(true);
    const decoded = await cli(['operator', 'generate-root', `-decode=${done.encoded_token}`, `-otp=${otp}`]);
    expect(decoded.code, decoded.stderr).to.equal(0);
    return decoded.stdout.trim();
  };

  const expectRoot = async (token: string) => {
    const self = await new TestClient(server.address).get('auth/token/lookup-self', { token });
    expect(self.status, self.text).to.equal(200);
    expect(self.body.data.policies).to.deep.equal(['root']);
  };

  beforeEach(async () => {
    server = await startAutoSealedServer();
    home = await tempDir();
  });
  afterEach(async () => {
    await server.close();
    await home.remove();
  });

  it('operator init -recovery-shares -recovery-threshold prints the recovery keys; generate-root takes them', async () => {
    const init = await cli(['operator', 'init', '-recovery-shares=3', '-recovery-threshold=2']);
    expect(init.code, init.stderr).to.equal(0);
    const keys = [...init.stdout.matchAll(/^Recovery Key \d: (\S+)$/gm)].map((m) => m[1]!);
    expect(keys).to.have.length(3);
    expect(init.stdout).to.match(/^Initial Root Token: hvs\.\S+$/m);
    expect(init.stdout).to.contain('The recovery key is split into 3 key shares with a key threshold of 2');
    const status = await cli(['status', '-format=json']);
    expect(JSON.parse(status.stdout)).to.include({ type: 'static', sealed: false, recovery_seal: true, t: 2, n: 3 });

    await expectRoot(await generateRoot([keys[2]!, keys[1]!]));
  });

  it('operator rekey -target=recovery replaces the recovery shares: the new ones generate a root token', async () => {
    const init = JSON.parse((await cli(['operator', 'init', '-recovery-shares=3', '-recovery-threshold=2', '-format=json'])).stdout) as Record<string, any>;
    const token = init.root_token as string;
    const keys = init.recovery_keys_b64 as string[];
    const start = await cli(['operator', 'rekey', '-init', '-target=recovery', '-key-shares=2', '-key-threshold=2', '-format=json'], { token });
    expect(start.code, start.stderr).to.equal(0);
    const { nonce } = JSON.parse(start.stdout) as { nonce: string };
    const first = await cli(['operator', 'rekey', '-target=recovery', `-nonce=${nonce}`, keys[0]!], { token });
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.match(/Rekey Progress\s+1\/2/);
    const done = await cli(['operator', 'rekey', '-target=recovery', `-nonce=${nonce}`, '-'], { token, stdin: `${keys[2]}\n` });
    expect(done.code, done.stderr).to.equal(0);
    const newKeys = [...done.stdout.matchAll(/^Key \d: (\S+)$/gm)].map((m) => m[1]!);
    expect(newKeys).to.have.length(2);
    expect(done.stdout).to.contain('needed to authorize root generation and recovery rekey');

    await expectRoot(await generateRoot(newKeys));
  });

  it('operator init -recovery-shares=0 creates none; operator rekey -init -target=recovery prints new ones at once', async () => {
    const init = await cli(['operator', 'init', '-recovery-shares=0', '-format=json']);
    expect(init.code, init.stderr).to.equal(0);
    const out = JSON.parse(init.stdout) as Record<string, any>;
    expect(out).to.include({ recovery_keys_shares: 0, recovery_keys_threshold: 0 });
    expect(out.recovery_keys_b64).to.deep.equal([]);

    const created = await cli(['operator', 'rekey', '-init', '-target=recovery', '-key-shares=1', '-key-threshold=1'], { token: out.root_token as string });
    expect(created.code, created.stderr).to.equal(0);
    const keys = [...created.stdout.matchAll(/^Key \d: (\S+)$/gm)].map((m) => m[1]!);
    expect(keys).to.have.length(1);
    await expectRoot(await generateRoot(keys));
  });

  it('operator rekey refuses a -target other than barrier or recovery', async () => {
    const run = await cli(['operator', 'rekey', '-init', '-target=hsm']);
    expect(run.code).to.not.equal(0);
    expect(run.stderr).to.contain('-target must be "barrier" or "recovery", not "hsm"');
  });
});
