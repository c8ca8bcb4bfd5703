/**
 * Several seals at once (issue #32, item 4): a production server with two transit seals, each
 * served by another Keywarden server, wraps its root key under both; with either one stopped it
 * still restarts unsealed, says which seal is down (sys/seal-backend-status, the log), and wraps
 * the root key again under a seal that was down once it answers at a start. Adding or removing a
 * seal is a configuration change and a restart.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { parseConfig } from '../../../core/config/config.js';
import { startServer, type RunningServer } from '../../../core/server.js';
import { tempDir } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';
import { expectMarker, failing, initAuto, REWRAPPED, SealedNode, TransitServer, unsealed, waitStatus, writeMarker, type Status } from '../../helpers/auto-seal.js';

async function backends(client: TestClient): Promise<Status> {
  const res = await client.get('sys/seal-backend-status');
  expect(res.status, res.text).to.equal(200);
  return res.body as Status;
}

describe('several seals at once: two transit seals on two other Keywarden servers', function () {
  this.timeout(180_000);
  let dir: { path: string; remove: () => Promise<void> };
  let node: SealedNode;
  let east: TransitServer;
  let west: TransitServer;

  const both = () => [east.stanza({ name: 'east', priority: 1 }), west.stanza({ name: 'west', priority: 2 })];

  beforeEach(async () => {
    dir = await tempDir('keywarden-seal-set-');
    node = new SealedNode(dir.path, path.join(dir.path, 'data'));
    east = await new TransitServer(path.join(dir.path, 'east')).create();
    west = await new TransitServer(path.join(dir.path, 'west')).create();
  });

  afterEach(async () => {
    await node.kill();
    await east.stop();
    await west.stop();
    await dir.remove();
  });

  it('restarts unsealed with either seal stopped, and reports the one that is down', async () => {
    const client = await node.start(both());
    const token = await initAuto(client);
    expect(await waitStatus(client, unsealed)).to.include({ sealed: false, type: 'transit' });
    await writeMarker(client, token);
    expect(await backends(client)).to.deep.include({ healthy: true, fully_wrapped: true });
    await node.kill();

    await east.stop();
    const withoutEast = await node.start(both());
    expect(await waitStatus(withoutEast, unsealed)).to.include({ sealed: false });
    await expectMarker(withoutEast, token);
    const report = await backends(withoutEast);
    expect(report).to.include({ healthy: false });
    expect(report.unhealthy_since).to.be.a('string');
    const [first, second] = report.backends as Status[];
    expect(first).to.include({ name: 'east', healthy: false, disabled: false });
    expect(second).to.include({ name: 'west', healthy: true });
    expect(node.child!.output()).to.contain('a seal could not wrap the root key');
    await node.kill();

    await east.restart();
    await west.stop();
    const withoutWest = await node.start(both());
    expect(await waitStatus(withoutWest, unsealed)).to.include({ sealed: false });
    await expectMarker(withoutWest, token);
    expect(((await backends(withoutWest)).backends as Status[]).map((b) => [b.name, b.healthy])).to.deep.equal([
      ['east', true],
      ['west', false],
    ]);
  });

  it('wraps the root key under a seal that was down at init once it answers at a start, after which that seal alone unseals', async () => {
    await west.stop();
    const client = await node.start(both());
    const token = await initAuto(client);
    await writeMarker(client, token);
    expect(await backends(client)).to.include({ fully_wrapped: false });
    await node.kill();

    await west.restart();
    const back = await node.start(both());
    expect(await waitStatus(back, unsealed)).to.include({ sealed: false });
    await node.logged(REWRAPPED);
    expect(await backends(back)).to.include({ healthy: true, fully_wrapped: true });
    await node.kill();

    await east.stop();
    const westOnly = await node.start(both());
    expect(await waitStatus(westOnly, unsealed)).to.include({ sealed: false });
    await expectMarker(westOnly, token);
  });

  it('stays sealed while both seals are down, naming each, and unseals when one answers', async () => {
    const client = await node.start(both());
    const token = await initAuto(client);
    await writeMarker(client, token);
    await node.kill();
    await east.stop();
    await west.stop();

    const waiting = await node.start(both());
    const down = await waitStatus(waiting, failing);
    expect(down).to.include({ sealed: true, initialized: true });
    expect(down.seal_error).to.match(/seal "east": transit seal: cannot reach .*ECONNREFUSED; seal "west": transit seal: cannot reach .*ECONNREFUSED/);
    await west.restart();
    expect(await waitStatus(waiting, unsealed, 60_000)).to.include({ sealed: false });
    await expectMarker(waiting, token);
  });

  it('takes a seal added to the configuration at the next start, and lets one be removed the same way', async () => {
    const client = await node.start(east.stanza());
    const token = await initAuto(client);
    await writeMarker(client, token);
    await node.kill();

    // The store's one seal is kept under its type's name; the new one is added beside it.
    const added = await node.start([east.stanza({ priority: 1 }), west.stanza({ name: 'west', priority: 2 })]);
    expect(await waitStatus(added, unsealed)).to.include({ sealed: false });
    await node.logged(REWRAPPED);
    await node.kill();

    await east.stop();
    const removed = await node.start(west.stanza({ name: 'west' }));
    expect(await waitStatus(removed, unsealed)).to.include({ sealed: false });
    await node.logged(REWRAPPED);
    await expectMarker(removed, token);
    await node.kill();

    // Wrapped again by the one seal left, in its own form: the name is needed no more.
    const plain = await node.start(west.stanza());
    expect(await waitStatus(plain, unsealed)).to.include({ sealed: false });
    await expectMarker(plain, token);
  });

  it('moves from one auto seal to another: the old stanza, disabled, opens the root key beside the new one, after which the old seal is needed no more', async () => {
    const client = await node.start(east.stanza());
    const token = await initAuto(client);
    await writeMarker(client, token);
    await node.kill();

    const keyFile = path.join(dir.path, 'static.key');
    await writeFile(keyFile, randomBytes(32), { mode: 0o600 });
    const staticSeal = { static: { current_key_id: 'k1', current_key: `file://${keyFile}` } };
    const moving = await node.start([east.stanza({ priority: 1, disabled: 'true' }), { static: { ...staticSeal.static, priority: 2 } }]);
    expect(await waitStatus(moving, unsealed)).to.include({ sealed: false, type: 'static' });
    await node.logged(REWRAPPED);
    expect(((await backends(moving)).backends as Status[]).map((b) => [b.name, b.disabled])).to.deep.equal([
      ['transit', true],
      ['static', false],
    ]);
    await node.kill();

    await east.stop();
    const moved = await node.start(staticSeal);
    expect(await waitStatus(moved, unsealed)).to.include({ sealed: false, type: 'static' });
    await expectMarker(moved, token);
  });
});

describe('several seals at once: the health check while the node runs', function () {
  this.timeout(180_000);
  let dir: { path: string; remove: () => Promise<void> };
  let east: TransitServer;
  let west: TransitServer;
  let node: RunningServer | undefined;

  /** The node in-process, its seals checked every few hundred milliseconds instead of minutes. */
  async function startNode(): Promise<TestClient> {
    const config = parseConfig(
      {
        listener: { tcp: { address: '127.0.0.1:0', tls_disable: true } },
        storage: { leveldb: { path: path.join(dir.path, 'data') } },
        seal: [east.stanza({ name: 'east', priority: 1 }), west.stanza({ name: 'west', priority: 2 })],
      },
      dir.path,
    );
    node = await startServer({
      config,
      logger: pino({ level: 'silent' }),
      autoUnsealBackoff: { firstMs: 100, longestMs: 200 },
      sealHealthIntervals: { healthyMs: 300, unhealthyMs: 150 },
    });
    return new TestClient(node.address);
  }

  /** Polls sys/seal-backend-status until `done` holds for it, for up to a minute; answers the last status. */
  async function waitBackends(client: TestClient, done: (status: Status) => boolean): Promise<Status> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const status = await backends(client);
      if (done(status) || Date.now() > deadline) return status;
      await delay(50);
    }
  }

  beforeEach(async () => {
    dir = await tempDir('keywarden-seal-health-');
    east = await new TransitServer(path.join(dir.path, 'east')).create();
    west = await new TransitServer(path.join(dir.path, 'west')).create();
  });

  afterEach(async () => {
    await node?.close(0);
    node = undefined;
    await east.stop();
    await west.stop();
    await dir.remove();
  });

  it('wraps the root key under a seal that was down once it answers, without a restart, and reports a seal that goes down meanwhile', async () => {
    await west.stop();
    const client = await startNode();
    const token = await initAuto(client);
    await writeMarker(client, token);
    expect(await backends(client)).to.include({ healthy: false, fully_wrapped: false });

    await west.restart();
    const rewrapped = await waitBackends(client, (s) => s.fully_wrapped === true && s.healthy === true);
    expect(rewrapped).to.include({ fully_wrapped: true, healthy: true });
    expect(((rewrapped.backends as Status[]).map((b) => [b.name, b.healthy]))).to.deep.equal([
      ['east', true],
      ['west', true],
    ]);

    // A seal that stops while the node runs is found by the next check, not at the next start.
    await east.stop();
    const down = await waitBackends(client, (s) => s.healthy === false);
    expect(down).to.include({ healthy: false });
    expect(down.unhealthy_since).to.be.a('string');
    expect((down.backends as Status[])[0]).to.include({ name: 'east', healthy: false });
    await node!.close(0);
    node = undefined;

    // West alone, which had no wrapping of its own at init, unseals the restarted node.
    const restarted = await startNode();
    expect(await waitStatus(restarted, unsealed)).to.include({ sealed: false });
    await expectMarker(restarted, token);
  });
});
