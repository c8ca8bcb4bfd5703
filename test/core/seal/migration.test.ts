/**
 * Seal migration (issue #32, item 3): a production server initialized with Shamir shares is given
 * a transit seal stanza, says a migration is pending (seal-status `migration: true`), refuses the
 * shares without `migrate`, and moves to the seal when unsealed with the old shares and
 * `-migrate`; from then on it unseals itself. From the transit seal it moves to a static seal with
 * the old stanza disabled beside the new one. The data written under Shamir is there at every step.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runCli } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/server.js';
import { expectMarker, failing, REWRAPPED, SealedNode, TransitServer, unsealed, waitStatus, writeMarker } from '../../helpers/auto-seal.js';

describe('seal migration: a Shamir store moves to an auto seal, and from one auto seal to another, with its data', function () {
  this.timeout(180_000);
  let dir: { path: string; remove: () => Promise<void> };
  let node: SealedNode;
  let transit: TransitServer;

  beforeEach(async () => {
    dir = await tempDir('keywarden-seal-migration-');
    node = new SealedNode(dir.path, path.join(dir.path, 'data'));
    transit = await new TransitServer(path.join(dir.path, 'transit')).create();
  });

  afterEach(async () => {
    await node.kill();
    await transit.stop();
    await dir.remove();
  });

  it('Shamir → transit with the old shares and operator unseal -migrate, then transit → static, the data intact at each step', async () => {
    const shamir = await node.start(undefined);
    const init = await shamir.put('sys/init', { secret_shares: 3, secret_threshold: 2 });
    expect(init.status, init.text).to.equal(200);
    const keys = init.body.keys as string[];
    const token = init.body.root_token as string;
    for (const key of keys.slice(0, 2)) expect((await shamir.put('sys/unseal', { key })).status).to.equal(200);
    await writeMarker(shamir, token);
    await node.kill();

    const pending = await node.start(transit.stanza());
    const waiting = await waitStatus(pending, failing);
    expect(waiting).to.include({ type: 'shamir', initialized: true, sealed: true, migration: true, t: 2, n: 3 });
    expect(waiting.seal_error).to.match(/a seal migration is pending/);
    const plain = await pending.put('sys/unseal', { key: keys[0] });
    expect(plain.status).to.equal(400);
    expect(plain.body.errors[0]).to.match(/a seal migration is pending: .*unseal with the shares and migrate=true/);

    const first = await runCli(['operator', 'unseal', '-migrate', keys[1]!], { VAULT_ADDR: pending.baseUrl, HOME: dir.path });
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.match(/Seal Migration in Progress\s+true/);
    const second = await pending.put('sys/unseal', { key: keys[2], migrate: true });
    expect(second.status, second.text).to.equal(200);
    expect(second.body).to.include({ sealed: false, type: 'transit', migration: false, recovery_seal: true });
    await expectMarker(pending, token);
    await node.kill();

    const auto = await node.start(transit.stanza());
    expect(await waitStatus(auto, unsealed)).to.include({ sealed: false, type: 'transit' });
    await expectMarker(auto, token);
    await node.kill();

    const keyFile = path.join(dir.path, 'static.key');
    await writeFile(keyFile, randomBytes(32), { mode: 0o600 });
    const staticSeal = { static: { current_key_id: 'k1', current_key: `file://${keyFile}` } };
    const moving = await node.start([transit.stanza({ priority: 1, disabled: 'true' }), { static: { ...staticSeal.static, priority: 2 } }]);
    expect(await waitStatus(moving, unsealed)).to.include({ sealed: false, type: 'static' });
    await node.logged(REWRAPPED);
    await node.kill();

    await transit.stop();
    const moved = await node.start(staticSeal);
    expect(await waitStatus(moved, unsealed)).to.include({ sealed: false, type: 'static' });
    await expectMarker(moved, token);
    // The old shares open nothing any more.
    expect((await moved.put('sys/seal', {}, { token })).status).to.equal(204);
    const shares = await moved.put('sys/unseal', { key: keys[0] });
    expect(shares.status).to.equal(400);
    expect(shares.body.errors[0]).to.match(/the static seal unseals this store at start; it takes no unseal keys/);
  });

  it('refuses migrate when no migration is pending, and leaves the progress as it was', async () => {
    const shamir = await node.start(undefined);
    const init = await shamir.put('sys/init', { secret_shares: 3, secret_threshold: 2 });
    const keys = init.body.keys as string[];
    expect((await shamir.put('sys/unseal', { key: keys[0] })).body).to.include({ progress: 1 });
    const refused = await shamir.put('sys/unseal', { key: keys[1], migrate: true });
    expect(refused.status).to.equal(400);
    expect(refused.body.errors[0]).to.match(/^migrate: no seal migration is pending/);
    expect((await shamir.get('sys/seal-status')).body).to.include({ sealed: true, progress: 1, migration: false });
  });
});
