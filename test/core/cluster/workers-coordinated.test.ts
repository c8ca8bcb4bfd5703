/**
 * `keywarden server` with two workers (issue #31): the operations that change what every worker
 * serves — a snapshot restore, a rekey, a transit key's rotation or configuration, a mount table
 * change, the keyring's rotation, a policy — done through one worker are what the other serves as
 * soon as the answer returns, whichever worker took them; and what must be used once (a rekey's
 * nonce, a use-limited token, a wrapping token, a check-and-set version) is used once when
 * concurrent requests reach both workers. Each client is pinned to one worker
 * (test/helpers/workers.ts).
 */
import { expect } from 'chai';
import { tempDir } from '../../helpers/server.js';
import { request, type TestResponse } from '../../helpers/http.js';
import { activeAndStandby, type PinnedClient, type WorkersServer, startWorkers } from '../../helpers/workers.js';

function ok(res: TestResponse, what: string): TestResponse {
  expect(res.status, `${what}: ${res.text}`).to.be.oneOf([200, 204]);
  return res;
}

describe('keywarden server with two workers: changes through one worker, seen by the other at once', function () {
  this.timeout(180_000);
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: WorkersServer;
  let rootToken: string;
  let unsealKeys: string[];
  let active: PinnedClient;
  let standby: PinnedClient;
  /** Both directions: through the standby seen on the active worker, then the other way. */
  const directions = () =>
    [
      ['standby', standby, active],
      ['active', active, standby],
    ] as const;

  before(async () => {
    dir = await tempDir('keywarden-workers-coordinated-');
    server = await startWorkers(dir.path, {});
    const init = await request(server.address, 'PUT', 'sys/init', { body: { secret_shares: 1, secret_threshold: 1 } });
    expect(init.status, init.text).to.equal(200);
    rootToken = init.body.root_token as string;
    unsealKeys = init.body.keys as string[];
    const unsealed = await request(server.address, 'PUT', 'sys/unseal', { body: { key: unsealKeys[0] } });
    expect(unsealed.body.sealed, unsealed.text).to.equal(false);
    ({ active, standby } = await activeAndStandby(server.address, rootToken));
    ok(await active.post('sys/mounts/kv', { type: 'kv', options: { version: '2' } }), 'mount kv');
    ok(await active.post('sys/mounts/transit', { type: 'transit' }), 'mount transit');
  });

  after(async () => {
    active?.close();
    standby?.close();
    if (server) expect(await server.stop(), server.output()).to.equal(0);
    await dir?.remove();
  });

  it('serves the restored state on the other worker as soon as a snapshot restore through one answers, both ways', async () => {
    for (const [name, through, other] of directions()) {
      ok(await through.post('kv/data/snap', { data: { state: 'saved' } }), 'write before the snapshot');
      ok(await through.put('sys/policies/acl/snap', { policy: 'path "kv/*" { capabilities = ["read"] }' }), 'policy before');
      const saved = await through.get('sys/storage/snapshot');
      expect(saved.status, saved.text).to.equal(200);
      const term = (await other.get('sys/key-status')).body.data.term as number;

      // Changed after the snapshot, each change seen by the other worker before the restore.
      ok(await through.post('kv/data/snap', { data: { state: 'changed' } }), 'write after the snapshot');
      ok(await through.post('kv/data/snap-later', { data: { state: 'later' } }), 'new secret after the snapshot');
      ok(await through.send('DELETE', 'sys/policies/acl/snap'), 'delete the policy');
      ok(await through.post(`sys/mounts/later-${name}`, { type: 'kv' }), 'mount after the snapshot');
      ok(await through.post('sys/rotate'), 'keyring rotation');
      expect((await other.get('kv/data/snap')).body.data.data).to.deep.equal({ state: 'changed' });
      expect((await other.get('sys/key-status')).body.data.term).to.equal(term + 1);

      const restored = await through.post('sys/storage/snapshot', undefined, { rawBody: saved.bytes });
      expect(restored.status, `restore through the ${name} worker: ${restored.text}`).to.equal(204);
      const read = await other.get('kv/data/snap');
      expect(read.body?.data?.data, `the other worker after a restore through the ${name} one: ${read.text}`).to.deep.equal({ state: 'saved' });
      expect((await other.get('kv/data/snap-later')).status, 'a secret written after the snapshot').to.equal(404);
      expect((await other.get('sys/policies/acl/snap')).status, 'a policy deleted after the snapshot').to.equal(200);
      expect(Object.keys((await other.get('sys/mounts')).body.data), 'a mount made after the snapshot').to.not.include(`later-${name}/`);
      expect((await other.get('sys/key-status')).body.data.term, 'the keyring of the snapshot').to.equal(term);
      // Writes after the restore, through either worker, land in the restored store; after a
      // rotation, whose term has the number of one the restore dropped, both workers read them.
      ok(await through.post('sys/rotate'), 'keyring rotation after the restore');
      for (const [writer, reader] of [
        [other, through],
        [through, other],
      ] as const) {
        ok(await writer.post('kv/data/snap-after', { data: { by: writer === other ? 'other' : 'through' } }), 'write after the restore');
        for (const client of [reader, writer]) {
          const after = await client.get('kv/data/snap-after');
          expect(after.body?.data?.data, `a write after the restore and a rotation: ${after.text}`).to.deep.equal({ by: writer === other ? 'other' : 'through' });
        }
      }
      for (const client of [through, other]) expect((await client.get('sys/key-status')).body.data.term).to.equal(term + 1);
    }
  });

  it('rekeys through either worker: the other reports the new shares at once and unseals only with them', async () => {
    let threshold = 1;
    for (const [name, through, other] of directions()) {
      const started = await through.put('sys/rekey/init', { secret_shares: 3, secret_threshold: 2 });
      expect(started.status, started.text).to.equal(200);
      // The rekey in progress is the server's: the other worker reports the same one.
      const progress = await other.get('sys/rekey/init');
      expect(progress.body, `rekey status on the other worker: ${progress.text}`).to.include({ started: true, nonce: started.body.nonce, n: 3, t: 2 });
      // The current shares: one at first, two of three after the first pass.
      let done: TestResponse | undefined;
      for (const key of unsealKeys.slice(0, threshold)) done = await through.put('sys/rekey/update', { key, nonce: started.body.nonce });
      expect(done!.body.complete, done!.text).to.equal(true);
      const oldKey = unsealKeys[0]!;
      unsealKeys = done!.body.keys as string[];
      threshold = 2;
      expect((await other.get('sys/seal-status')).body, `seal-status after a rekey through the ${name} worker`).to.include({ sealed: false, t: 2, n: 3 });

      ok(await other.put('sys/seal'), 'seal');
      const refused = await other.put('sys/unseal', { key: oldKey });
      expect(refused.status, `the share of before the rekey: ${refused.text}`).to.equal(400);
      for (const key of unsealKeys.slice(1, 3)) ok(await other.put('sys/unseal', { key }), 'unseal with the new shares');
      expect((await other.get('sys/seal-status')).body.sealed).to.equal(false);
      active.close();
      standby.close();
      ({ active, standby } = await activeAndStandby(server.address, rootToken));
    }
  });

  it('starts one rekey of concurrent rekey/init calls that reach both workers, and takes a share only with its nonce', async () => {
    const clients = [active, standby, active, standby];
    const answers = await Promise.all(clients.map((client) => client.put('sys/rekey/init', { secret_shares: 1, secret_threshold: 1 })));
    const started = answers.filter((answer) => answer.status === 200);
    expect(started, answers.map((answer) => `${answer.status} ${answer.text}`).join('\n')).to.have.length(1);
    for (const answer of answers.filter((a) => a.status !== 200)) expect(answer.status, answer.text).to.equal(400);
    const nonce = started[0]!.body.nonce as string;
    const stale = await standby.put('sys/rekey/update', { key: unsealKeys[0], nonce: 'not-the-nonce' });
    expect(stale.status, stale.text).to.equal(400);
    ok(await active.send('DELETE', 'sys/rekey/init'), 'cancel the rekey');
    // Cancelled through one worker, gone on the other: its nonce no longer takes a share.
    const cancelled = await standby.put('sys/rekey/update', { key: unsealKeys[0], nonce });
    expect(cancelled.status, cancelled.text).to.equal(400);
  });

  it('encrypts with a transit key\'s new version on the other worker as soon as a rotation through one answers, and goes by its configuration at once', async () => {
    ok(await active.post('transit/keys/rotating', {}), 'create the key');
    for (const [name, through, other] of directions()) {
      const rotated = await through.post('transit/keys/rotating/rotate');
      ok(rotated, `rotate through the ${name} worker`);
      const latest = ((await through.get('transit/keys/rotating')).body.data.latest_version as number);
      const sealedText = await other.post('transit/encrypt/rotating', { plaintext: Buffer.from('x').toString('base64') });
      expect(sealedText.body.data.ciphertext, `encrypt on the other worker after a rotation through the ${name} one`).to.match(new RegExp(`^vault:v${latest}:`));
      expect(sealedText.body.data.key_version).to.equal(latest);
    }
    // An older version's ciphertext, then a minimum decryption version set through one worker.
    const old = await active.post('transit/encrypt/rotating', { plaintext: Buffer.from('old').toString('base64'), key_version: 1 });
    expect(old.body.data.ciphertext, old.text).to.match(/^vault:v1:/);
    for (const [name, through, other] of directions()) {
      ok(await through.post('transit/keys/rotating/config', { min_decryption_version: 2 }), 'raise the minimum');
      const refused = await other.post('transit/decrypt/rotating', { ciphertext: old.body.data.ciphertext });
      expect(refused.status, `decrypt on the other worker after the ${name} one raised the minimum: ${refused.text}`).to.equal(400);
      ok(await through.post('transit/keys/rotating/config', { min_decryption_version: 1 }), 'lower the minimum');
      const opened = await other.post('transit/decrypt/rotating', { ciphertext: old.body.data.ciphertext });
      expect(opened.status, opened.text).to.equal(200);
      expect(Buffer.from(opened.body.data.plaintext as string, 'base64').toString()).to.equal('old');
    }
  });

  it('gives the same convergent ciphertext on both workers, and rotates a transit key once for concurrent rotations that reach both', async () => {
    ok(await active.post('transit/keys/convergent', { derived: true, convergent_encryption: true }), 'create a convergent key');
    const context = Buffer.from('tenant-1').toString('base64');
    const plaintext = Buffer.from('same').toString('base64');
    const [a, b] = await Promise.all([active, standby].map((client) => client.post('transit/encrypt/convergent', { plaintext, context })));
    expect(a!.status, a!.text).to.equal(200);
    expect(b!.body.data.ciphertext, 'the same plaintext and context on the other worker').to.equal(a!.body.data.ciphertext);

    const before = (await active.get('transit/keys/convergent')).body.data.latest_version as number;
    const clients = [active, standby, active, standby];
    const answers = await Promise.all(clients.map((client) => client.post('transit/keys/convergent/rotate')));
    for (const answer of answers) ok(answer, 'concurrent rotation');
    for (const client of [active, standby]) {
      const key = (await client.get('transit/keys/convergent')).body.data;
      // Each rotation adds one version: none is lost to another worker's concurrent write.
      expect(key.latest_version).to.equal(before + clients.length);
      expect(Object.keys(key.keys as object)).to.have.length(before + clients.length);
    }
  });

  it('mounts, tunes, moves and unmounts through one worker what the other serves at once', async () => {
    for (const [name, through, other] of directions()) {
      const mount = `moving-${name}`;
      ok(await through.post(`sys/mounts/${mount}`, { type: 'kv', options: { version: '2' } }), 'mount');
      ok(await other.post(`${mount}/data/s`, { data: { a: 1 } }), `write on the other worker to a mount made through the ${name} one`);
      ok(await through.post(`sys/mounts/${mount}/tune`, { max_versions: 1, description: 'tuned' }), 'tune');
      expect((await other.get(`sys/mounts/${mount}/tune`)).body.data).to.include({ description: 'tuned' });
      ok(await through.post(`${mount}/config`, { max_versions: 1 }), 'kv config');
      ok(await other.post(`${mount}/data/s`, { data: { a: 2 } }), 'second version');
      expect((await other.get(`${mount}/metadata/s`)).body.data.versions, 'kv configured on the other worker').to.have.all.keys('2');

      const moved = await through.post('sys/remount', { from: mount, to: `${mount}-moved` });
      expect(moved.status, moved.text).to.equal(200);
      const id = moved.body.migration_id as string;
      for (let tries = 0; ; tries++) {
        const status = await through.get(`sys/remount/status/${id}`);
        if (status.body.data.migration_info.status === 'success') break;
        expect(status.body.data.migration_info.status, status.text).to.equal('in-progress');
        expect(tries).to.be.below(200);
      }
      expect((await other.get(`${mount}-moved/data/s`)).body.data.data, `read on the other worker at the new path`).to.deep.equal({ a: 2 });
      expect((await other.get(`${mount}/data/s`)).status, 'the old path').to.equal(404);

      ok(await through.send('DELETE', `sys/mounts/${mount}-moved`), 'unmount');
      expect((await other.get(`${mount}-moved/data/s`)).status, 'an unmounted path on the other worker').to.equal(404);
    }
  });

  it('keeps every digit of a number written through either worker, a write the standby forwards included', async () => {
    const secret = '{"big":12345678901234567891,"huge":1e400,"small":1.5}';
    for (const [name, through, other] of directions()) {
      const written = await through.send('POST', `kv/data/digits-${name}`, { rawBody: `{"data":${secret}}`, headers: { 'Content-Type': 'application/json' } });
      expect(written.status, written.text).to.equal(200);
      for (const client of [through, other]) {
        const read = await client.get(`kv/data/digits-${name}`);
        expect(read.text, `written through the ${name} worker`).to.contain(`"data":${secret}`);
      }
    }
  });

  it("goes by a kv mount's settings changed through one worker on the other at once", async () => {
    for (const [name, through, other] of directions()) {
      // Both workers have read the settings before they change.
      for (const client of [through, other]) {
        ok(await client.post(`kv/data/settings-${name}`, { data: { v: 1 } }), 'a write without cas');
        expect((await client.get('kv/config')).body.data.cas_required).to.equal(false);
      }
      ok(await through.post('kv/config', { cas_required: true, max_versions: 3 }), 'require cas');
      for (const client of [other, through]) {
        expect((await client.get('kv/config')).body.data, `the settings read after the ${name} worker changed them`).to.include({ cas_required: true, max_versions: 3 });
        const refused = await client.post(`kv/data/settings-${name}`, { data: { v: 2 } });
        expect(refused.status, `a write without cas after the ${name} worker required it: ${refused.text}`).to.equal(400);
      }
      // Written once through each worker: version 2 is the current one.
      ok(await other.post(`kv/data/settings-${name}`, { data: { v: 2 }, options: { cas: 2 } }), 'a write with cas');
      ok(await through.post('kv/config', { cas_required: false, max_versions: 0 }), 'cas no longer required');
      for (const client of [other, through]) ok(await client.post(`kv/data/settings-${name}`, { data: { v: 3 } }), `a write without cas once the ${name} worker lifted the requirement`);
    }
  });

  it('counts a token\'s uses across workers, and revokes its children on both when it is revoked through one', async () => {
    const limited = (await active.post('auth/token/create', { num_uses: 3, policies: ['default'] })).body.auth.client_token as string;
    const uses = [standby, active, standby].map((client) => client.get('auth/token/lookup-self', { token: limited }));
    for (const use of await Promise.all(uses)) expect(use.status, use.text).to.equal(200);
    for (const client of [active, standby]) expect((await client.get('auth/token/lookup-self', { token: limited })).status, 'a fourth use').to.equal(403);

    for (const [name, through, other] of directions()) {
      const parent = (await through.post('auth/token/create', {})).body.auth.client_token as string;
      const child = (await other.post('auth/token/create', { policies: ['default'] }, { token: parent })).body.auth.client_token as string;
      expect((await through.get('auth/token/lookup-self', { token: child })).status).to.equal(200);
      ok(await through.post('auth/token/revoke', { token: parent }), 'revoke the parent');
      for (const client of [other, through]) {
        expect((await client.get('auth/token/lookup-self', { token: child })).status, `the child after its parent was revoked through the ${name} worker`).to.equal(403);
      }
    }
  });

  it('enforces a policy changed through one worker on the other at once', async () => {
    ok(await active.post('kv/data/guarded', { data: { v: 1 } }), 'write');
    ok(await active.put('sys/policies/acl/reader', { policy: 'path "kv/data/guarded" { capabilities = ["read"] }' }), 'policy');
    const token = (await active.post('auth/token/create', { policies: ['reader'] })).body.auth.client_token as string;
    for (const [name, through, other] of directions()) {
      expect((await other.get('kv/data/guarded', { token })).status).to.equal(200);
      ok(await through.put('sys/policies/acl/reader', { policy: 'path "kv/data/other" { capabilities = ["read"] }' }), 'narrow the policy');
      expect((await other.get('kv/data/guarded', { token })).status, `read on the other worker after the ${name} one narrowed the policy`).to.equal(403);
      ok(await through.put('sys/policies/acl/reader', { policy: 'path "kv/data/guarded" { capabilities = ["read"] }' }), 'widen it again');
    }
  });
});
