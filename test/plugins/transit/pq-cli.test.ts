/** Post-quantum keys from the generic CLI (`keywarden write/read`), as a user drives them against a real server. */
import { expect } from 'chai';
import { startUnsealedServer, tempDir } from '../../helpers/server.js';
import { runCli, type CliRun } from '../../helpers/cli.js';
import type { RunningServer } from '../../../core/server.js';

describe('transit post-quantum keys from the CLI', function () {
  this.timeout(60_000);
  let server: Awaited<ReturnType<typeof startUnsealedServer>> & RunningServer;
  let home: { path: string; remove: () => Promise<void> };
  let cli: (args: string[]) => Promise<CliRun>;

  before(async () => {
    server = await startUnsealedServer();
    home = await tempDir();
    const env = { PATH: process.env.PATH, HOME: home.path, KEYWARDEN_ADDR: server.address, KEYWARDEN_TOKEN: server.rootToken };
    cli = (args) => runCli(args, env);
    const enabled = await cli(['secrets', 'enable', 'transit']);
    expect(enabled.code, enabled.stderr).to.equal(0);
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  for (const create of [
    ['type=ml-dsa', 'parameter_set=65'],
    ['type=hybrid', 'parameter_set=44', 'hybrid_key_type_pqc=ml-dsa', 'hybrid_key_type_ec=ed25519'],
    ['type=slh-dsa', 'parameter_set=slh-dsa-shake-128f'],
  ]) {
    it(`${create.join(' ')}: write creates it, sign and verify run, and a changed input does not verify`, async () => {
      const name = create[0]!.replace('type=', 'cli-');
      const made = await cli(['write', '-format=json', `transit/keys/${name}`, ...create]);
      expect(made.code, made.stderr).to.equal(0);
      expect(JSON.parse(made.stdout).data.parameter_set).to.equal(create[1]!.replace('parameter_set=', ''));
      const input = Buffer.from('signed from the CLI').toString('base64');
      const signed = await cli(['write', '-field=signature', `transit/sign/${name}`, `input=${input}`]);
      expect(signed.code, signed.stderr).to.equal(0);
      const signature = signed.stdout.trim();
      expect(signature).to.match(/^vault:v1:/);
      const valid = await cli(['write', '-field=valid', `transit/verify/${name}`, `input=${input}`, `signature=${signature}`]);
      expect([valid.code, valid.stdout.trim()]).to.deep.equal([0, 'true']);
      const other = await cli(['write', '-field=valid', `transit/verify/${name}`, `input=${Buffer.from('other').toString('base64')}`, `signature=${signature}`]);
      expect([other.code, other.stdout.trim()]).to.deep.equal([0, 'false']);
    });
  }

  it('a missing parameter_set is a 400 naming the field', async () => {
    const refused = await cli(['write', 'transit/keys/no-set', 'type=ml-dsa']);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.contain('invalid parameter_set "" for key type ml-dsa: expected one of 44, 65, 87');
  });
});
