/**
 * Seal migration in an HA cluster on PostgreSQL (issue #32, item 3), Vault's way
 * (https://developer.hashicorp.com/vault/docs/concepts/seal#seal-migration): a standby restarted
 * with the new configuration and unsealed with `migrate` checks the shares and waits; the active
 * node is stepped down, and the node that takes its place moves the store. The other node follows
 * once restarted with the new configuration; restarted with the old one it stays sealed and says why.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { createTestDatabase } from '../helpers/postgres.js';
import { Cluster, type ClusterNode } from './cluster.js';

const TO_STATIC = 'seal migration: the root key is wrapped by the seal';
const TO_SHAMIR = 'seal migration: the root key is stored under the recovery key';

describe('HA cluster on PostgreSQL: seal migration', function () {
  this.timeout(300_000);
  let cluster: Cluster | undefined;

  after(async () => {
    await cluster?.stop();
  });

  /** A node's seal-status once it answers (a node just started may not listen yet). */
  async function sealStatus(node: ClusterNode): Promise<Record<string, unknown>> {
    const res = await node.client.get('sys/seal-status');
    expect(res.status, res.text).to.equal(200);
    return res.body as Record<string, unknown>;
  }

  async function until(what: string, done: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await done())) {
      if (Date.now() > deadline) expect.fail(`${what}\n${cluster!.output()}`);
      await delay(100);
    }
  }

  async function unsealWithMigrate(node: ClusterNode, keys: readonly string[]): Promise<Record<string, unknown>> {
    let body: Record<string, unknown> = {};
    for (const key of keys.slice(0, 2)) {
      const res = await node.client.put('sys/unseal', { key, migrate: true });
      expect(res.status, res.text).to.equal(200);
      body = res.body as Record<string, unknown>;
    }
    return body;
  }

  async function restart(node: ClusterNode, settings: Record<string, unknown>): Promise<void> {
    await cluster!.kill(node);
    await cluster!.reconfigure(node, settings);
    await cluster!.startNode(cluster!.nodes.indexOf(node));
  }

  async function expectMarker(node: ClusterNode): Promise<void> {
    const res = await node.client.get('sys/policies/acl/marker');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.policy).to.contain('marker/*');
  }

  it('moves the store from Shamir to a static seal and back through the node that becomes active; the other node follows once restarted with the new stanza, and not with a stale one', async () => {
    cluster = await Cluster.start(2, await createTestDatabase());
    await cluster.initialize();
    const b = await cluster.active();
    const a = cluster.standbys(b)[0]!;
    const written = await b.client.put('sys/policies/acl/marker', { policy: 'path "marker/*" { capabilities = ["read"] }' });
    expect(written.status, written.text).to.equal(204);
    const seal = { static: { current_key_id: 'k1', current_key: randomBytes(32).toString('hex') } };

    // The standby, restarted with the seal stanza and unsealed with migrate, waits to be active.
    await restart(a, { seal });
    expect(await sealStatus(a)).to.include({ sealed: true, migration: true });
    expect(await unsealWithMigrate(a, cluster.unsealKeys)).to.include({ sealed: false });
    await until('node A did not take the standby role', async () => (await a.client.get('sys/leader')).body.is_self === false);
    expect(await sealStatus(a)).to.include({ sealed: false, type: 'shamir', migration: true });
    expect(a.process!.output()).not.to.contain(TO_STATIC);

    expect((await b.client.put('sys/step-down')).status).to.equal(204);
    await until('node A did not become active', async () => (await cluster!.active(30_000)) === a);
    await until('node A did not move the store', () => a.process!.output().includes(TO_STATIC));
    expect(await sealStatus(a)).to.include({ sealed: false, type: 'static', recovery_seal: true, t: 2, n: 3, migration: false });
    // B runs on with the root key it holds, and reports the store as it is now.
    expect(await sealStatus(b)).to.include({ sealed: false, type: 'static', recovery_seal: true });
    await expectMarker(b);

    // Restarted with its old configuration, B stays sealed, says why, and takes no shares.
    await restart(b, {});
    const stale = await sealStatus(b);
    expect(stale).to.include({ sealed: true, type: 'static' });
    expect(stale.seal_error).to.contain('has no seal stanza');
    const refused = await b.client.put('sys/unseal', { key: cluster.unsealKeys[0] });
    expect(refused.status, refused.text).to.equal(400);
    expect(refused.body.errors[0]).to.contain('has no seal stanza');

    // Restarted with the seal stanza, B unseals itself: no unseal call.
    await restart(b, { seal });
    await until('node B did not unseal itself', async () => (await sealStatus(b)).sealed === false);
    await expectMarker(b);

    // Back to Shamir through the node that becomes active: A, restarted with the stanza disabled.
    await restart(a, { seal: { static: { ...seal.static, disabled: 'true' } } });
    await cluster.active(60_000, [b]);
    expect(await sealStatus(a)).to.include({ sealed: true, migration: true });
    expect(await unsealWithMigrate(a, cluster.unsealKeys)).to.include({ sealed: false });
    await until('node A did not take the standby role', async () => (await a.client.get('sys/leader')).body.is_self === false);
    expect(a.process!.output()).not.to.contain(TO_SHAMIR);
    expect((await b.client.put('sys/step-down')).status).to.equal(204);
    await until('node A did not become active', async () => (await cluster!.active(30_000)) === a);
    await until('node A did not move the store', () => a.process!.output().includes(TO_SHAMIR));
    expect(await sealStatus(a)).to.include({ sealed: false, type: 'shamir', recovery_seal: false, t: 2, n: 3 });

    // B, restarted without the stanza, unseals with the shares (the recovery shares were these).
    await restart(b, {});
    expect(await sealStatus(b)).to.include({ sealed: true, type: 'shamir' });
    await cluster.unseal(b);
    expect(await sealStatus(b)).to.include({ sealed: false, type: 'shamir' });
    await expectMarker(b);
  });
});
