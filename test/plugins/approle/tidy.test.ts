/**
 * `tidy/secret-id` over HTTP: expired secret IDs and their accessors go, live ones stay, with
 * Vault's answers to a started tidy.
 */
import { expect } from 'chai';
import { ManualClock, startUnsealedServer } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

/** How many listings to wait through for the background tidy to finish before giving up. */
const MAX_POLLS = 500;

describe('approle tidy of secret IDs', function () {
  this.timeout(60_000);
  const clock = new ManualClock();
  let server: RunningServer & { client: TestClient };
  let root: TestClient;

  before(async () => {
    server = await startUnsealedServer({ plugins: [], clock });
    root = server.client;
    expect((await root.post('sys/auth/apps', { type: 'approle' })).status).to.equal(204);
    await root.post('auth/apps/role/batch', {});
  });
  after(() => server.close());

  const accessors = async (): Promise<string[]> => {
    const res = await root.list('auth/apps/role/batch/secret-id');
    return res.status === 404 ? [] : (res.body.data.keys as string[]);
  };

  it('removes expired secret IDs and their accessors, and keeps the others', async () => {
    const brief = (await root.post('auth/apps/role/batch/secret-id', { ttl: '10m' })).body.data;
    const lasting = (await root.post('auth/apps/role/batch/secret-id', {})).body.data;
    clock.advance(11 * 60);
    expect(await accessors()).to.have.members([brief.secret_id_accessor, lasting.secret_id_accessor]);

    const started = await root.post('auth/apps/tidy/secret-id', {});
    expect(started.status).to.equal(202);
    expect(started.body.warnings).to.deep.equal(["Tidy operation successfully started. Any information from the operation will be printed to the server's logs."]);
    let left = await accessors();
    for (let i = 0; i < MAX_POLLS && left.length > 1; i++) left = await accessors();
    expect(left).to.deep.equal([lasting.secret_id_accessor]);
    const lookup = await root.post('auth/apps/role/batch/secret-id-accessor/lookup', { secret_id_accessor: brief.secret_id_accessor });
    expect(lookup.status).to.equal(404);
    expect((await root.post('auth/apps/role/batch/secret-id/lookup', { secret_id: lasting.secret_id })).status).to.equal(200);
  });
});
