/**
 * Scale-out: three production servers (child processes) on one real PostgreSQL database with HA
 * enabled. Each node reaches the database through its own cuttable TCP proxy.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestDatabase } from '../helpers/postgres.js';
import { Cluster, sleep, untilStatus, type ClusterNode } from './cluster.js';
import { TcpProxy } from './tcp-proxy.js';
import { CANARY_PRINCIPAL, startCanary } from '../reliability/support/canary.js';
import { iamLogin } from '../reliability/support/cloud.js';
import { entriesOf, streamCollector } from '../core/audit/listeners.js';
import { freePort } from '../helpers/net.js';
import { SealedError } from '../../core/errors.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bin/keywarden.js');
const b64 = (text: string) => Buffer.from(text).toString('base64');
const plain = (encoded: string) => Buffer.from(encoded, 'base64').toString('utf8');

describe('HA cluster on PostgreSQL (3 nodes)', function () {
  this.timeout(120_000);
  let cluster: Cluster;
  let proxies: TcpProxy[];
  /** Where the audit test's collector listens: the one address the nodes let API-created devices reach. */
  let collectorPort: number;

  before(async () => {
    const url = new URL(await createTestDatabase());
    proxies = [];
    for (let i = 0; i < 3; i++) proxies.push(await TcpProxy.start({ host: url.hostname, port: Number(url.port) }));
    collectorPort = await freePort();
    const audit = { unsafe_allow_api_audit_creation: true, api_audit_socket_allowlist: [`127.0.0.1:${collectorPort}`] };
    cluster = await Cluster.start(
      3,
      url.toString(),
      (i) => {
        const viaProxy = new URL(url.toString());
        viaProxy.port = String(proxies[i]!.port);
        return viaProxy.toString();
      },
      undefined,
      audit,
    );
    await cluster.initialize();
    await cluster.active();
    const mounted = await cluster.nodes[1]!.client.post('sys/mounts/ha-transit', { type: 'transit' });
    expect(mounted.status, mounted.text).to.equal(204);
    // At once, while standbys may still be loading the fresh cluster's tables: every node serves the new mount.
    expect((await cluster.nodes[2]!.client.post('ha-transit/keys/first', {})).status).to.equal(200);
    for (const node of cluster.nodes) {
      const enc = await node.client.post('ha-transit/encrypt/first', { plaintext: b64('first') });
      expect(enc.status, `${node.name}: ${enc.text}`).to.equal(200);
    }
  });

  after(async () => {
    if (cluster) await cluster.stop();
    for (const proxy of proxies ?? []) await proxy.close();
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && cluster) console.log(cluster.output().slice(-6000));
  });

  it('elects exactly one active node, and every node says which one in sys/leader and sys/health', async () => {
    const active = await cluster.active();
    for (const node of cluster.nodes) {
      const leader = await node.client.get('sys/leader');
      expect(leader.body).to.include({ ha_enabled: true, is_self: node === active, leader_address: active.address });
      const health = await node.client.get('sys/health');
      expect(health.status).to.equal(node === active ? 200 : 429);
      expect(health.body.standby).to.equal(node !== active);
      expect((await node.client.get('sys/health?standbyok=true')).status).to.equal(200);
    }
    // The CLI's status shows the role, as the vault CLI does.
    const standby = cluster.standbys(active)[0]!;
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'status'], { env: { ...process.env, VAULT_ADDR: standby.address } });
    expect(stdout).to.match(/HA Enabled\s+true/);
    expect(stdout).to.match(/HA Mode\s+standby/);
    expect(stdout).to.contain(active.address);
  });

  it('encrypts on any node and decrypts on any other', async () => {
    const [a, b, c] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
    expect((await b.client.post('ha-transit/keys/shared', {})).status).to.equal(200);
    for (const from of [a, b, c]) {
      const enc = await from.client.post('ha-transit/encrypt/shared', { plaintext: b64(`from ${from.name}`) });
      expect(enc.status, enc.text).to.equal(200);
      for (const to of [a, b, c]) {
        if (to === from) continue;
        const dec = await to.client.post('ha-transit/decrypt/shared', { ciphertext: enc.body.data.ciphertext });
        expect(dec.status, dec.text).to.equal(200);
        expect(plain(dec.body.data.plaintext)).to.equal(`from ${from.name}`);
      }
    }
  });

  it('uses a key rotated through one node at its new version in the very next encrypt on every other node', async () => {
    const nodes = cluster.nodes;
    expect((await nodes[0]!.client.post('ha-transit/keys/spinning', {})).status).to.equal(200);
    for (let version = 2; version <= 7; version++) {
      const via = nodes[version % 3]!;
      const rotated = await via.client.post('ha-transit/keys/spinning/rotate', {});
      expect(rotated.status, rotated.text).to.equal(200);
      for (const node of nodes) {
        const enc = await node.client.post('ha-transit/encrypt/spinning', { plaintext: b64('x') });
        expect(enc.body.data.ciphertext, `${node.name} after rotation ${version} through ${via.name}`).to.match(new RegExp(`^vault:v${version}:`));
      }
    }
  });

  it('honours X-Vault-No-Request-Forwarding on a standby: a write is refused with 503 and not run, a read is answered', async () => {
    const active = await cluster.active();
    const standby = cluster.standbys(active)[0]!;
    const noForwarding = { headers: { 'X-Vault-No-Request-Forwarding': 'true' } };
    const write = await standby.client.put('sys/policies/acl/not-forwarded', { policy: 'path "x" { capabilities = ["read"] }' }, noForwarding);
    expect(write.status, write.text).to.equal(503);
    expect(write.body.errors[0]).to.contain('X-Vault-No-Request-Forwarding');
    expect((await active.client.get('sys/policies/acl/not-forwarded')).status).to.equal(404);
    expect((await standby.client.post('ha-transit/encrypt/shared', { plaintext: b64('local') }, noForwarding)).status).to.equal(200);
  });

  it('applies policies, tokens, tunes and new mounts written through one node on every other at once', async () => {
    const [a, b, c] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
    await a.client.put('sys/policies/acl/enc-only', { policy: 'path "ha-transit/encrypt/shared" { capabilities = ["update"] }' });
    const created = await b.client.post('auth/token/create', { policies: ['enc-only'] });
    expect(created.status, created.text).to.equal(200);
    const token = created.body.auth.client_token as string;
    const asUser = (node: ClusterNode) => node.client.post('ha-transit/encrypt/shared', { plaintext: b64('u') }, { token });
    expect((await asUser(c)).status).to.equal(200);
    // Narrow the policy through c: a and b deny at once.
    await c.client.put('sys/policies/acl/enc-only', { policy: 'path "ha-transit/decrypt/*" { capabilities = ["update"] }' });
    expect((await asUser(a)).status).to.equal(403);
    expect((await asUser(b)).status).to.equal(403);
    // Revoke through a: b and c refuse the token at once.
    await c.client.put('sys/policies/acl/enc-only', { policy: 'path "ha-transit/encrypt/shared" { capabilities = ["update"] }' });
    expect((await asUser(b)).status).to.equal(200);
    expect((await a.client.post('auth/token/revoke', { token })).status).to.equal(204);
    expect((await asUser(b)).status).to.equal(403);
    expect((await asUser(c)).status).to.equal(403);
    // A mount enabled through b is served by c at once; a tune through c shows on a.
    expect((await b.client.post('sys/mounts/late-transit', { type: 'transit' })).status).to.equal(204);
    expect((await c.client.post('late-transit/keys/k', {})).status).to.equal(200);
    expect((await c.client.post('late-transit/encrypt/k', { plaintext: b64('late') })).status).to.equal(200);
    expect((await c.client.post('sys/mounts/late-transit/tune', { max_lease_ttl: '2h' })).status).to.equal(204);
    expect((await a.client.get('sys/mounts/late-transit/tune')).body.data.max_lease_ttl).to.equal(7200);
    // Disabled through a: gone from b.
    expect((await a.client.delete('sys/mounts/late-transit')).status).to.equal(204);
    expect((await b.client.post('late-transit/encrypt/k', { plaintext: b64('late') })).status).to.equal(404);
  });

  it('opens an audit device enabled through one node on every node, and records the audited headers configured through another', async () => {
    const [a, b, c] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
    const collector = await streamCollector({ tcp: true, port: collectorPort });
    try {
      const enabled = await b.client.post('sys/audit/ha-net', { type: 'socket', options: { address: collector.address } });
      expect(enabled.status, enabled.text).to.equal(204);
      expect((await a.client.post('sys/config/auditing/request-headers/x-ha-trace', { hmac: false })).status).to.equal(204);
      for (const node of cluster.nodes) {
        expect((await node.client.get('sys/config/auditing/request-headers')).body.data.headers, node.name).to.deep.equal({ 'x-ha-trace': { hmac: false } });
        const res = await node.client.post('ha-transit/encrypt/first', { plaintext: b64('audited') }, { headers: { 'X-HA-Trace': `via-${node.name}` } });
        expect(res.status, `${node.name}: ${res.text}`).to.equal(200);
      }
      const traced = () => entriesOf(collector.lines).filter((e) => e.type === 'response' && e.request?.path === 'ha-transit/encrypt/first');
      await collector.waitFor(() => traced().length === 3);
      expect(traced().map((e) => e.request.headers['x-ha-trace'][0]).sort()).to.deep.equal(['via-node0', 'via-node1', 'via-node2']);
      // The standbys answered their encrypts themselves: each node wrote to the collector on a connection of its own.
      expect(collector.connections).to.be.at.least(3);
    } finally {
      expect((await c.client.delete('sys/audit/ha-net')).status).to.equal(204);
      await a.client.delete('sys/config/auditing/request-headers/x-ha-trace');
      await collector.close();
    }
    for (const node of cluster.nodes) expect((await node.client.get('sys/audit')).body.data, node.name).to.deep.equal({});
  });

  it('keeps the client address through forwarding for bound_cidrs, and refuses forwarding headers a client forges', async () => {
    const active = await cluster.active();
    const standby = cluster.standbys(active)[0]!;
    await active.client.post('auth/token/roles/here', { token_bound_cidrs: ['127.0.0.1/32'] });
    await active.client.post('auth/token/roles/elsewhere', { token_bound_cidrs: ['10.9.9.9/32'] });
    const bound = await active.client.post('auth/token/create/here', { ttl: '1h' });
    const elsewhere = await active.client.post('auth/token/create/elsewhere', {});
    expect((await standby.client.get('auth/token/lookup-self', { token: elsewhere.body.auth.client_token })).status).to.equal(403);
    // A write through a standby is forwarded; the active node checks the client's address, not the standby's.
    const renewed = await standby.client.put('auth/token/renew-self', {}, { token: bound.body.auth.client_token });
    expect(renewed.status, renewed.text).to.equal(200);
    const forged = {
      'X-Keywarden-Forwarded-For': '10.9.9.9',
      'X-Keywarden-Forwarded-At': String(Date.now()),
      'X-Keywarden-Forwarded-Mac': '00'.repeat(32),
    };
    for (const node of [active, standby]) {
      const res = await node.client.get('auth/token/lookup-self', { token: elsewhere.body.auth.client_token, headers: forged });
      expect(res.status, `${node.name}: a forged forwarding header must not change the client address`).to.equal(403);
    }
  });

  it('logs in through a standby with one call to the provider: service-token logins go to the active node, batch-token logins stay on the standby', async () => {
    const provider = await startCanary('sts-identity');
    try {
      const active = await cluster.active();
      const standby = cluster.standbys(active)[0]!;
      expect((await standby.client.post('sys/auth/ha-cloud', { type: 'cloud' })).status).to.equal(204);
      await standby.client.post('auth/ha-cloud/config/client', { access_key: 'AKIAHA', secret_key: 'ha-secret', sts_endpoint: provider.url, sts_region: 'us-east-1', max_retries: 0 });
      await standby.client.post('auth/ha-cloud/role/ha', { auth_type: 'iam', bound_iam_principal_arn: [CANARY_PRINCIPAL.arn], resolve_cloud_unique_ids: false, token_policies: ['default'] });
      const before = provider.requests.length;
      const service = await standby.client.post('auth/ha-cloud/login', { ...iamLogin(), role: 'ha' }, { token: '' });
      expect(service.status, service.text).to.equal(200);
      expect(service.body.auth.client_token).to.match(/^hvs\./);
      expect(provider.requests.length - before, 'STS calls for one service-token login').to.equal(1);
      expect((await cluster.standbys(active)[1]!.client.get('auth/token/lookup-self', { token: service.body.auth.client_token })).status).to.equal(200);

      expect((await active.client.post('sys/auth/ha-cloud/tune', { token_type: 'batch' })).status).to.equal(204);
      const again = provider.requests.length;
      const batch = await standby.client.post('auth/ha-cloud/login', { ...iamLogin(), role: 'ha' }, { token: '' });
      expect(batch.status, batch.text).to.equal(200);
      expect(batch.body.auth.client_token).to.match(/^hvb\./);
      expect(provider.requests.length - again, 'STS calls for one batch-token login').to.equal(1);
      for (const node of cluster.nodes) {
        expect((await node.client.get('auth/token/lookup-self', { token: batch.body.auth.client_token })).status, node.name).to.equal(200);
      }
    } finally {
      await provider.close();
    }
  });

  it('serves encrypt, decrypt, hmac, sign and verify on standbys from their own caches while the active node is frozen', async () => {
    const active = await cluster.active();
    const standbys = cluster.standbys(active);
    await active.client.post('ha-transit/keys/signer', { type: 'ed25519' });
    await active.client.post('ha-transit/keys/shared/rotate', {});
    // Warm each standby's cache of the key (as traffic would).
    for (const node of standbys) await node.client.post('ha-transit/sign/signer', { input: b64('warm') });
    active.process!.child.kill('SIGSTOP');
    try {
      for (const node of standbys) {
        const enc = await node.client.post('ha-transit/encrypt/shared', { plaintext: b64('frozen') });
        expect(enc.status, enc.text).to.equal(200);
        const dec = await node.client.post('ha-transit/decrypt/shared', { ciphertext: enc.body.data.ciphertext });
        expect(plain(dec.body.data.plaintext)).to.equal('frozen');
        expect((await node.client.post('ha-transit/hmac/shared', { input: b64('m') })).status).to.equal(200);
        const sig = await node.client.post('ha-transit/sign/signer', { input: b64('doc') });
        expect(sig.status, sig.text).to.equal(200);
        const ok = await node.client.post('ha-transit/verify/signer', { input: b64('doc'), signature: sig.body.data.signature });
        expect(ok.body.data.valid).to.equal(true);
        expect((await node.client.get('auth/token/lookup-self')).status).to.equal(200);
      }
    } finally {
      active.process!.child.kill('SIGCONT');
    }
  });

  it('a standby that loses the database refuses requests with a 503 that says why, and recovers when it is back', async () => {
    const active = await cluster.active();
    const standby = cluster.standbys(active)[0]!;
    const index = cluster.nodes.indexOf(standby);
    await proxies[index]!.cut();
    try {
      // The standby notices the broken feed within moments.
      const write = await untilStatus(() => standby.client.post('ha-transit/keys/shared/rotate', {}), 503, 40);
      expect(write.status, write.text).to.equal(503);
      expect(write.body.errors[0]).to.match(/PostgreSQL|storage/);
      const read = await standby.client.post('ha-transit/encrypt/shared', { plaintext: b64('x') });
      expect(read.status).to.equal(503);
      expect(read.body.errors[0]).to.match(/PostgreSQL|storage/);
      // It still answers about itself, and the other nodes go on serving writes.
      expect((await standby.client.get('sys/health')).status).to.equal(429);
      const other = cluster.standbys(active).find((n) => n !== standby)!;
      expect((await other.client.post('ha-transit/keys/shared/rotate', {})).status).to.equal(200);
    } finally {
      await proxies[index]!.restore();
    }
    const latest = (await active.client.get('ha-transit/keys/shared')).body.data.latest_version as number;
    const enc = await untilStatus(() => standby.client.post('ha-transit/encrypt/shared', { plaintext: b64('back') }), 200, 100);
    expect(enc.status, enc.text).to.equal(200);
    expect(enc.body.data.ciphertext, 'a change made while it was cut off is seen after it reconnects').to.match(new RegExp(`^vault:v${latest}:`));
  });

  it('an active node that loses the database gives the role up: another node takes over, and the old one rejoins as a standby', async () => {
    const active = await cluster.active();
    const index = cluster.nodes.indexOf(active);
    const others = cluster.standbys(active);
    await proxies[index]!.cut();
    let successor: ClusterNode | undefined;
    try {
      successor = await cluster.active(15_000, others);
      expect((await successor.client.post('ha-transit/keys/after-cut', {})).status).to.equal(200);
      const refused = await active.client.post('ha-transit/keys/on-the-cut-node', {});
      expect(refused.status, refused.text).to.equal(503);
      expect((await active.client.get('sys/leader')).body.is_self, 'the cut-off node no longer claims the role').to.equal(false);
    } finally {
      await proxies[index]!.restore();
    }
    const rejoined = await untilStatus(() => active.client.post('ha-transit/keys/after-cut/rotate', {}), 200, 100);
    expect(rejoined.status, rejoined.text).to.equal(200);
    expect((await active.client.get('sys/leader')).body).to.include({ is_self: false, leader_address: successor!.address });
  });

  it('a sealed node serves nothing while the others go on', async () => {
    const active = await cluster.active();
    const standby = cluster.standbys(active)[0]!;
    expect((await standby.client.put('sys/seal')).status).to.equal(204);
    const refused = await standby.client.post('ha-transit/encrypt/shared', { plaintext: b64('x') });
    expect(refused.status).to.equal(503);
    expect(refused.body.errors[0]).to.equal(new SealedError().message);
    expect((await active.client.post('ha-transit/encrypt/shared', { plaintext: b64('x') })).status).to.equal(200);
    await cluster.unseal(standby);
    expect((await standby.client.post('ha-transit/encrypt/shared', { plaintext: b64('x') })).status).to.equal(200);
  });

  it('runs periodic work on the active node only: expired tokens are swept by it, never by a standby', async () => {
    const active = await cluster.active();
    const before = cluster.nodes.map((n) => n.process!.output().split('expired tokens removed').length);
    for (let i = 0; i < 3; i++) {
      const res = await cluster.nodes[i]!.client.post('auth/token/create', { ttl: '1s', policies: ['default'] });
      expect(res.status, res.text).to.equal(200);
    }
    // periodic_interval is 1s in these nodes' configuration.
    let swept = false;
    for (let i = 0; i < 50 && !swept; i++) {
      await sleep(100);
      swept = active.process!.output().split('expired tokens removed').length > before[cluster.nodes.indexOf(active)]!;
    }
    expect(swept, 'the active node swept the expired tokens').to.equal(true);
    for (const node of cluster.standbys(active)) {
      expect(node.process!.output().split('expired tokens removed').length, node.name).to.equal(before[cluster.nodes.indexOf(node)]);
    }
  });

  it('shares one keyring: rotation settings and rotations sent to a standby reach every node, and so does the active node\'s encryption count', async () => {
    const active = await cluster.active();
    const standby = cluster.standbys(active)[0]!;
    const set = await standby.client.post('sys/rotate/config', { interval: '720h', max_operations: 2_000_000 });
    expect(set.status, set.text).to.equal(204);
    for (const node of cluster.nodes) {
      expect((await node.client.get('sys/rotate/config')).body.data, node.name).to.deep.equal({ max_operations: 2_000_000, enabled: true, interval: '720h0m0s' });
    }
    const term = (await active.client.get('sys/key-status')).body.data.term as number;
    expect((await standby.client.put('sys/rotate')).status).to.equal(204);
    for (const node of cluster.nodes) expect((await node.client.get('sys/key-status')).body.data.term, node.name).to.equal(term + 1);

    for (let i = 0; i < 5; i++) expect((await active.client.post(`ha-transit/keys/count-${i}`, {})).status).to.equal(200);
    const counted = (await active.client.get('sys/key-status')).body.data.encryptions as number;
    expect(counted).to.be.at.least(5);
    // The active node stores its count with its periodic work (every second here); standbys read it from the keyring.
    let seen = 0;
    for (let i = 0; i < 50 && seen < counted; i++) {
      await sleep(100);
      seen = (await standby.client.get('sys/key-status')).body.data.encryptions as number;
    }
    expect(seen, 'the standby sees the count the active node stored').to.be.at.least(counted);
  });

  it('moves a mount through a standby: every node serves it at the new path, and the move\'s status is read through any node', async () => {
    const active = await cluster.active();
    const standby = cluster.standbys(active)[0]!;
    expect((await standby.client.post('sys/mounts/ha-move-from', { type: 'transit' })).status).to.equal(204);
    expect((await standby.client.post('ha-move-from/keys/k', {})).status).to.equal(200);
    const sealed = (await standby.client.post('ha-move-from/encrypt/k', { plaintext: b64('moved') })).body.data.ciphertext as string;
    const moved = await standby.client.post('sys/remount', { from: 'ha-move-from', to: 'ha-move/to' });
    expect(moved.status, moved.text).to.equal(200);
    for (const node of cluster.nodes) {
      const dec = await node.client.post('ha-move/to/decrypt/k', { ciphertext: sealed });
      expect(dec.status, `${node.name}: ${dec.text}`).to.equal(200);
      expect(dec.body.data.plaintext, node.name).to.equal(b64('moved'));
      expect((await node.client.post('ha-move-from/decrypt/k', { ciphertext: sealed })).status, node.name).to.equal(404);
      const status = await node.client.get(`sys/remount/status/${moved.body.data.migration_id}`);
      expect(status.body.data?.migration_info?.status, `${node.name}: ${status.text}`).to.equal('success');
    }
  });

  it('hands the active role to another node on sys/step-down, sent to any node', async () => {
    const before = await cluster.active();
    const via = cluster.standbys(before)[0]!;
    const res = await via.client.put('sys/step-down');
    expect(res.status, res.text).to.equal(204);
    const after = await cluster.active(15_000, cluster.standbys(before));
    expect(after).to.not.equal(before);
    expect((await before.client.get('sys/leader')).body).to.include({ is_self: false });
    expect((await before.client.post('ha-transit/keys/after-step-down', {})).status).to.equal(200);
    expect((await after.client.get('ha-transit/keys/after-step-down')).status).to.equal(200);
  });

  it('fails over when the active node is SIGKILLed under load: another node takes over, no acknowledged write is lost', async () => {
    const active = await cluster.active();
    const survivors = cluster.standbys(active);
    const acknowledged = { keys: new Set<string>(), policies: new Set<string>(), ciphertexts: new Map<string, string>() };
    let stop = false;
    let killedAt = 0;
    let failoverMs = -1;
    let retried = 0;
    const pick = () => {
      const alive = cluster.nodes.filter((n) => n.process);
      return alive[Math.floor(Math.random() * alive.length)]!;
    };
    // Each operation is retried through any node until it is acknowledged, as a client behind a
    // load balancer would; an operation counts as acknowledged only on a 2xx answer.
    const attempt = async (op: (node: ClusterNode) => Promise<{ status: number }>): Promise<boolean> => {
      for (let tries = 0; tries < 200 && !stop; tries++) {
        const res = await op(pick()).catch(() => ({ status: 0 }));
        if (res.status >= 200 && res.status < 300) return true;
        retried++;
        await sleep(25);
      }
      return false;
    };
    const worker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const id = `w${w}-${i}`;
        switch (i % 3) {
          case 0:
            if (await attempt((n) => n.client.post(`ha-transit/keys/${id}`, {}))) acknowledged.keys.add(id);
            break;
          case 1:
            if (await attempt((n) => n.client.put(`sys/policies/acl/${id}`, { policy: `path "x/${id}" { capabilities = ["read"] }` }))) {
              acknowledged.policies.add(id);
            }
            break;
          default: {
            let ciphertext = '';
            const ok = await attempt(async (n) => {
              const res = await n.client.post('ha-transit/encrypt/shared', { plaintext: b64(id) });
              if (res.status === 200) ciphertext = res.body.data.ciphertext;
              return res;
            });
            if (ok) acknowledged.ciphertexts.set(id, ciphertext);
          }
        }
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    await sleep(1500);
    killedAt = Date.now();
    await cluster.kill(active);
    // Fail-over time: the kill until a write through a surviving node is acknowledged again.
    for (let probe = 0; failoverMs < 0; probe++) {
      const res = await survivors[probe % survivors.length]!.client.put(`sys/policies/acl/probe-${probe}`, { policy: 'path "p" { capabilities = ["read"] }' }).catch(() => undefined);
      if (res?.status === 204) failoverMs = Date.now() - killedAt;
      else await sleep(10);
      if (Date.now() - killedAt > 30_000) throw new Error('no node took over within 30 s');
    }
    await sleep(1500);
    stop = true;
    await Promise.all(workers);

    const successor = await cluster.active(15_000, survivors);
    expect(successor).to.not.equal(active);
    let checked = 0;
    for (const node of survivors) {
      for (const id of acknowledged.keys) {
        expect((await node.client.get(`ha-transit/keys/${id}`)).status, `key ${id} on ${node.name}`).to.equal(200);
        checked++;
      }
      for (const id of acknowledged.policies) {
        expect((await node.client.get(`sys/policies/acl/${id}`)).status, `policy ${id} on ${node.name}`).to.equal(200);
        checked++;
      }
      for (const [id, ciphertext] of acknowledged.ciphertexts) {
        const dec = await node.client.post('ha-transit/decrypt/shared', { ciphertext });
        expect(plain(dec.body.data.plaintext), `ciphertext ${id} on ${node.name}`).to.equal(id);
        checked++;
      }
    }
    // The killed node comes back as a standby and serves what was written while it was gone.
    const index = cluster.nodes.indexOf(active);
    await cluster.startNode(index);
    await cluster.unseal(active);
    const [someId, someCiphertext] = [...acknowledged.ciphertexts][acknowledged.ciphertexts.size - 1]!;
    const dec = await active.client.post('ha-transit/decrypt/shared', { ciphertext: someCiphertext });
    expect(plain(dec.body.data.plaintext)).to.equal(someId);
    expect((await active.client.get('sys/leader')).body.is_self).to.equal(false);
    console.log(
      `      fail-over: ${failoverMs} ms from SIGKILL to the first acknowledged write on the new active node; ` +
        `${acknowledged.keys.size} keys, ${acknowledged.policies.size} policies, ${acknowledged.ciphertexts.size} ciphertexts acknowledged, ` +
        `${checked} checks on ${survivors.length} surviving nodes, ${retried} client retries`,
    );
    expect(acknowledged.keys.size + acknowledged.policies.size).to.be.greaterThan(10);
  });
});

describe('HA cluster on PostgreSQL: declared audit devices', function () {
  this.timeout(90_000);

  it('the active node applies its own audit stanzas, standbys none, and a node that takes over applies its own', async () => {
    const stanza = (name: string) => ({ file: { [name]: { options: { file_path: 'discard' } } } });
    // node1 declares one device more than node0: which of them is active decides what the table holds.
    const declared = [['shared/'], ['only-node1/', 'shared/']];
    const cluster = await Cluster.start(2, await createTestDatabase(), undefined, undefined, (i) => ({
      audit: declared[i]!.map((path) => stanza(path.slice(0, -1))),
    }));
    try {
      await cluster.initialize();
      const first = await cluster.active();
      const firstIndex = cluster.nodes.indexOf(first);
      const listed = async (node: ClusterNode) => Object.keys((await node.client.get('sys/audit')).body.data).sort();
      for (const node of cluster.nodes) expect(await listed(node), node.name).to.deep.equal(declared[firstIndex]);

      await cluster.kill(first);
      const second = await cluster.active(30_000, cluster.standbys(first));
      expect(await listed(second)).to.deep.equal(declared[cluster.nodes.indexOf(second)]);
      expect((await second.client.delete('sys/audit/shared')).body.errors).to.deep.equal(['cannot disable configuration-managed audit device']);
    } finally {
      await cluster.stop();
    }
  });
});

describe('HA cluster on PostgreSQL: initialization', function () {
  this.timeout(60_000);

  it('initializes once when two nodes are asked at the same moment: one answers the shares, the other "already initialized"', async () => {
    const cluster = await Cluster.start(2, await createTestDatabase());
    try {
      const [a, b] = cluster.nodes as [ClusterNode, ClusterNode];
      const answers = await Promise.all([a, b].map((n) => n.client.put('sys/init', { secret_shares: 1, secret_threshold: 1 })));
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses, answers.map((r) => r.text).join('\n')).to.deep.equal([200, 400]);
      const winner = answers.find((r) => r.status === 200)!;
      expect(answers.find((r) => r.status === 400)!.body.errors[0]).to.match(/already initialized/);
      // The shares handed out unseal both nodes: only one keyring was written.
      for (const node of [a, b]) {
        const res = await node.client.put('sys/unseal', { key: winner.body.keys[0] });
        expect(res.body.sealed, node.name).to.equal(false);
      }
    } finally {
      await cluster.stop();
    }
  });
});
