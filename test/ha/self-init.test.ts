/**
 * Self-initialization in an HA cluster on PostgreSQL (issue #32, item 6): nodes started together on
 * an empty store with the same initialize stanzas; only the node whose init wins the advisory lock
 * runs them, and every node unseals itself.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { createTestDatabase } from '../helpers/postgres.js';
import { Cluster, type ClusterNode } from './cluster.js';

const RAN = 'self-init: every initialize request ran';
/** Whether the other node lost the race for the lock or started after init: either way it skips them. */
const SKIPPED = /self-init: (another node initialized the store first; the initialize stanzas run there|the store is initialized already; the initialize stanzas do not run again)/;

describe('HA cluster on PostgreSQL: self-initialization', function () {
  this.timeout(120_000);
  let cluster: Cluster | undefined;

  after(async () => {
    await cluster?.stop();
  });

  it('two nodes started together on an empty store: one runs the stanzas, the other skips them, and both unseal', async () => {
    const settings = {
      seal: { static: { current_key_id: 'k1', current_key: randomBytes(32).toString('hex') } },
      initialize: {
        access: {
          request: {
            policy: { operation: 'update', path: 'sys/policies/acl/superuser', data: { policy: 'path "*" { capabilities = ["read", "list", "sudo"] }' } },
            userpass: { operation: 'update', path: 'sys/auth/userpass', data: { type: 'userpass' } },
            admin: { operation: 'update', path: 'auth/userpass/users/admin', data: { password: 'pw', token_policies: ['superuser'] } },
          },
        },
      },
    };
    cluster = await Cluster.start(2, await createTestDatabase(), undefined, undefined, settings);
    const said = (node: ClusterNode, line: string | RegExp) => (typeof line === 'string' ? node.process!.output().includes(line) : line.test(node.process!.output()));
    for (let i = 0; i < 400 && !cluster.nodes.every((n) => said(n, RAN) || said(n, SKIPPED)); i++) await delay(50);
    const ran = cluster.nodes.filter((n) => said(n, RAN));
    const skipped = cluster.nodes.filter((n) => said(n, SKIPPED));
    expect(ran.map((n) => n.name), cluster.nodes.map((n) => n.process!.output()).join('\n')).to.have.length(1);
    expect(skipped.map((n) => n.name)).to.have.length(1);
    expect(said(skipped[0]!, '"self-init: request done"')).to.equal(false);

    const active = await cluster.active();
    for (const node of cluster.nodes) {
      for (let i = 0; i < 200 && (await node.client.get('sys/seal-status')).body.sealed !== false; i++) await delay(50);
      expect((await node.client.get('sys/seal-status')).body).to.include({ initialized: true, sealed: false, type: 'static' });
    }
    const login = await active.client.put('auth/userpass/login/admin', { password: 'pw' });
    expect(login.status, login.text).to.equal(200);
    const users = await active.client.list('auth/userpass/users', { token: login.body.auth.client_token as string });
    expect(users.body.data.keys).to.deep.equal(['admin']);
  });
});
