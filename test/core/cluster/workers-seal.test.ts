/**
 * The seal across the workers of one server (issue #32, item 6): a rekey or a seal migration done
 * through one worker is what every other worker reports and goes by at once, not the seal
 * configuration it read when it unsealed; the shares of an unseal add up whichever worker each
 * one reaches.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { tempDir } from '../../helpers/server.js';
import { request } from '../../helpers/http.js';
import { activeAndStandby, PinnedClient, startWorkers, until, type WorkersServer } from '../../helpers/workers.js';

/** Connections to the server until both workers have one, told apart once unsealed by `sys/leader`. */
async function bothWorkers(address: string, token: string): Promise<PinnedClient[]> {
  const { active, standby } = await activeAndStandby(address, token);
  return [active, standby];
}

describe('keywarden server with two workers: the seal configuration after a rekey or a migration', function () {
  this.timeout(180_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: WorkersServer | undefined;
  let clients: PinnedClient[] = [];

  beforeEach(async () => {
    dir = await tempDir('keywarden-workers-seal-');
  });

  afterEach(async () => {
    for (const client of clients) client.close();
    clients = [];
    if (server) expect(await server.stop(), server.output()).to.equal(0);
    server = undefined;
    await dir.remove();
  });

  it('adds up the shares of an unseal sent over different connections, whichever worker each reaches, and shows every worker the same progress', async () => {
    server = await startWorkers(dir.path, {});
    const init = await request(server.address, 'PUT', 'sys/init', { body: { secret_shares: 5, secret_threshold: 3 } });
    expect(init.status, init.text).to.equal(200);
    // Four connections: the cluster spreads them over both workers (checked once unsealed).
    clients = Array.from({ length: 4 }, () => new PinnedClient(server!.address));
    const keys = init.body.keys as string[];
    for (let i = 0; i < 2; i++) {
      const res = await clients[i]!.put('sys/unseal', { key: keys[i] });
      expect(res.status, res.text).to.equal(200);
      expect(res.body, `after share ${i + 1}`).to.include({ sealed: true, progress: i + 1 });
      for (const client of clients) expect((await client.get('sys/seal-status')).body, `seal-status after share ${i + 1}`).to.include({ sealed: true, progress: i + 1, t: 3 });
    }
    // A share that is not one of them is refused with a 400, as on a server of one.
    const wrong = await clients[2]!.put('sys/unseal', { key: 'not-a-share' });
    expect(wrong.status, wrong.text).to.equal(400);
    const nonce = (await clients[0]!.get('sys/seal-status')).body.nonce as string;
    expect((await clients[3]!.get('sys/seal-status')).body.nonce).to.equal(nonce);
    const last = await clients[2]!.put('sys/unseal', { key: keys[2] });
    expect(last.body, last.text).to.include({ sealed: false, progress: 0 });
    for (const client of clients) {
      client.token = init.body.root_token as string;
      expect((await client.get('sys/seal-status')).body).to.include({ sealed: false });
    }
    const roles = await Promise.all(clients.map((client) => client.isActive()));
    expect(new Set(roles), 'the connections reached both workers').to.have.property('size', 2);
  });

  it('reports a rekey done through one worker on the other at once, and a migration to a static seal done through one worker on every worker', async () => {
    server = await startWorkers(dir.path, {});
    const init = await request(server.address, 'PUT', 'sys/init', { body: { secret_shares: 1, secret_threshold: 1 } });
    expect(init.status, init.text).to.equal(200);
    const rootToken = init.body.root_token as string;
    expect((await request(server.address, 'PUT', 'sys/unseal', { body: { key: init.body.keys[0] } })).body.sealed).to.equal(false);
    clients = await bothWorkers(server.address, rootToken);
    const [through, other] = clients as [PinnedClient, PinnedClient];
    expect((await through.put('sys/policies/acl/marker', { policy: 'path "marker/*" { capabilities = ["read"] }' })).status).to.equal(204);

    const started = await through.put('sys/rekey/init', { secret_shares: 3, secret_threshold: 2 });
    expect(started.status, started.text).to.equal(200);
    const done = await through.put('sys/rekey/update', { key: init.body.keys[0], nonce: started.body.nonce });
    expect(done.body.complete, done.text).to.equal(true);
    const shares = done.body.keys as string[];
    expect((await other.get('sys/seal-status')).body).to.include({ sealed: false, type: 'shamir', t: 2, n: 3 });

    // The other worker rekeys from the new shares: it checks them against the scheme now stored.
    const again = await other.put('sys/rekey/init', { secret_shares: 2, secret_threshold: 2 });
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.include({ t: 2, n: 2, required: 2 });
    expect((await other.send('DELETE', 'sys/rekey/init')).status).to.equal(204);

    for (const client of clients) client.close();
    expect(await server.stop(), server.output()).to.equal(0);
    const key = randomBytes(32).toString('hex');
    server = await startWorkers(dir.path, { settings: { seal: { static: { current_key_id: 'k1', current_key: key } } } });
    // The shares go to one worker: each collects its own.
    const unsealer = new PinnedClient(server.address);
    clients = [unsealer];
    expect((await unsealer.get('sys/seal-status')).body).to.include({ sealed: true, migration: true });
    for (const share of shares.slice(0, 2)) {
      const res = await unsealer.put('sys/unseal', { key: share, migrate: true });
      expect(res.status, res.text).to.equal(200);
    }
    unsealer.close();
    clients = await bothWorkers(server.address, rootToken);
    for (const client of clients) {
      const status = await client.get('sys/seal-status');
      expect(status.body, `worker ${(await client.isActive()) ? 'active' : 'standby'}`).to.include({ sealed: false, type: 'static', recovery_seal: true, t: 2, n: 3, migration: false });
      // The old shares are recovery shares now: no worker takes them for a rekey of unseal shares.
      const rekey = await client.put('sys/rekey/init', { secret_shares: 1, secret_threshold: 1 });
      expect(rekey.status, rekey.text).to.equal(400);
      expect(rekey.body.errors[0]).to.contain('sys/rekey-recovery-key');
      expect((await client.get('sys/policies/acl/marker')).status).to.equal(200);
    }

    // Restarted, every worker unseals itself through the seal.
    for (const client of clients) client.close();
    expect(await server.stop(), server.output()).to.equal(0);
    server = await startWorkers(dir.path, { settings: { seal: { static: { current_key_id: 'k1', current_key: key } } } });
    const address = server.address;
    await until(() => server!.output().split('\n').filter((line) => line.includes('"msg":"auto-unseal: unsealed"')).length >= 1);
    clients = await bothWorkers(address, rootToken);
    for (const client of clients) expect((await client.get('sys/seal-status')).body).to.include({ sealed: false, type: 'static' });
  });
});
