/** Rate-limit quotas through the CLI's generic read, write and list, as the vault CLI manages them. */
import { expect } from 'chai';
import { startUnsealedServer, tempDir } from '../../../helpers/server.js';
import type { TestClient } from '../../../helpers/http.js';
import type { RunningServer } from '../../../../core/server.js';
import { runCli, type CliRun } from '../../../helpers/cli.js';

describe('keywarden write|read|list sys/quotas/rate-limit', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };
  let home: { path: string; remove: () => Promise<void> };
  let env: NodeJS.ProcessEnv;
  const cli = (args: string[]): Promise<CliRun> => runCli(args, env);

  before(async () => {
    server = await startUnsealedServer({ plugins: [] });
    home = await tempDir();
    env = { PATH: process.env.PATH, HOME: home.path, KEYWARDEN_ADDR: server.address, KEYWARDEN_TOKEN: server.rootToken };
    expect((await server.client.post('sys/mounts/notes', { type: 'kv' })).status).to.equal(204);
    expect((await server.client.post('notes/n', { text: 'x' })).status).to.equal(204);
  });
  after(async () => {
    await server.close();
    await home.remove();
  });

  it('writes, reads and lists a quota; once the rate is spent, a read exits 2 with the server\'s 429', async () => {
    const written = await cli(['write', 'sys/quotas/rate-limit/notes', 'path=notes/', 'rate=2', 'interval=1h']);
    expect(written.code, written.stderr).to.equal(0);
    const read = await cli(['read', '-format=json', 'sys/quotas/rate-limit/notes']);
    expect(JSON.parse(read.stdout).data).to.include({ path: 'notes/', rate: 2, interval: 3600, type: 'rate-limit' });
    expect((await cli(['list', 'sys/quotas/rate-limit'])).stdout).to.match(/^notes$/m);
    expect((await cli(['read', 'notes/n'])).code).to.equal(0);
    expect((await cli(['read', 'notes/n'])).code).to.equal(0);
    const refused = await cli(['read', 'notes/n']);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.contain('Code: 429');
    expect(refused.stderr).to.contain('rate limit quota exceeded');
  });
});
