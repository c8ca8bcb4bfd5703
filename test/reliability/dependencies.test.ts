/**
 * Failure of dependencies. Storage: LevelDB under a wrapper that fails on demand (a full disk,
 * a disk filling up in the middle of a request, a broken database, the database lost and
 * reopened) — every request fails cleanly (503 or 500, no internals in the message), nothing is
 * half-written, and the server recovers once the fault clears. The cloud provider (unreachable,
 * hanging, answering 5xx or garbage): clear errors within the configured retries, never a hang.
 */
import { expect } from 'chai';
import { LevelDbStorage } from '../../storage/leveldb.js';
import { tempDir } from '../helpers/server.js';
import { FAULT_DETAIL, FaultyStorage, diffSnapshots, snapshot } from './support/storage.js';
import { startReliabilityServer, type ReliabilityServer } from './support/server.js';
import type { Api, RawResponse } from './support/http.js';
import { startCanary } from './support/canary.js';
import { guardOutboundConnections } from './support/network-guard.js';
import { closedPortUrl, cloudLoginMissing, iamLogin } from './support/cloud.js';

const MOUNT = 'deps/transit';
const b64 = (text: string) => Buffer.from(text).toString('base64');

interface Write {
  readonly what: string;
  readonly method: 'POST' | 'DELETE';
  readonly path: string;
  readonly body?: unknown;
  /**
   * For the two operations that are a sequence of writes by nature (a tree of tokens, a mount's
   * data), the partial effect a failure may leave: only deletions a retry completes, never a state
   * that grants more than before.
   */
  readonly partial?: (changes: readonly string[]) => boolean;
}

/** Revoking a tree revokes children before the parent: a failure part-way leaves some children revoked, the parent alive. */
const onlyTokenDeletions = (changes: readonly string[]) => changes.every((c) => /^deleted sys\/token\//.test(c));

/** Writes of every kind the host and transit do, each on state prepared by `prepare`. */
function writes(): Write[] {
  return [
    { what: 'create a transit key', method: 'POST', path: `${MOUNT}/keys/new-key`, body: { type: 'aes256-gcm96' } },
    { what: 'rotate a transit key', method: 'POST', path: `${MOUNT}/keys/k1/rotate` },
    { what: 'change a key\'s config', method: 'POST', path: `${MOUNT}/keys/k1/config`, body: { deletion_allowed: true, min_encryption_version: 0 } },
    { what: 'encrypt with upsert (creates the key)', method: 'POST', path: `${MOUNT}/encrypt/upserted`, body: { plaintext: b64('upsert') } },
    { what: 'create a token', method: 'POST', path: 'auth/token/create', body: { policies: ['default'], ttl: '1h' } },
    { what: 'write a policy', method: 'POST', path: 'sys/policies/acl/p1', body: { policy: 'path "deps/*" { capabilities = ["read"] }' } },
    { what: 'delete a policy', method: 'DELETE', path: 'sys/policies/acl/p0' },
    { what: 'enable a secrets engine', method: 'POST', path: 'sys/mounts/deps/other', body: { type: 'transit' } },
    { what: 'disable a secrets engine', method: 'DELETE', path: 'sys/mounts/deps/doomed' },
    { what: 'tune a secrets engine', method: 'POST', path: `sys/mounts/${MOUNT}/tune`, body: { default_lease_ttl: '2h' } },
    { what: 'rotate the barrier keyring', method: 'POST', path: 'sys/rotate' },
    { what: 'create a token role', method: 'POST', path: 'auth/token/roles/r1', body: { allowed_policies: ['default'] } },
    { what: 'revoke a token with children', method: 'POST', path: 'auth/token/revoke', body: { token: '<parent>' }, partial: onlyTokenDeletions },
  ];
}

async function prepare(server: ReliabilityServer): Promise<{ parent: string }> {
  const api = server.api;
  await api.expect('POST', `sys/mounts/${MOUNT}`, { type: 'transit' });
  await api.expect('POST', 'sys/mounts/deps/doomed', { type: 'transit' });
  await api.expect('POST', 'deps/doomed/keys/d1', {});
  await api.expect('POST', `${MOUNT}/keys/k1`, { type: 'aes256-gcm96' });
  await api.expect('POST', 'sys/policies/acl/p0', { policy: 'path "x/*" { capabilities = ["read"] }' });
  await api.expect('POST', 'sys/policies/acl/creator', { policy: 'path "auth/token/create" { capabilities = ["update"] }' });
  const parent = await api.expect('POST', 'auth/token/create', { policies: ['creator'], ttl: '1h' }, [200]);
  const parentToken = parent.json.auth.client_token as string;
  for (let i = 0; i < 3; i++) await api.expect('POST', 'auth/token/create', { ttl: '1h' }, [200], parentToken);
  return { parent: parentToken };
}

/** A write with the tokens of this world filled in. */
function bind(write: Write, world: { parent: string }): Write {
  return write.body === undefined ? write : { ...write, body: JSON.parse(JSON.stringify(write.body).replace('<parent>', world.parent)) };
}

function expectCleanFailure(res: RawResponse, what: string): void {
  expect(res.status, `${what}: ${res.text}`).to.be.oneOf([500, 503]);
  expect(res.headers['content-type'], what).to.equal('application/json');
  expect(res.json?.errors, what).to.be.an('array').with.length(1);
  // The store's own text (a file path, an OS error) never reaches the client.
  for (const leak of [FAULT_DETAIL, 'ENOSPC', '/var/lib', 'LEVEL_', '000042.log']) expect(res.text, what).to.not.contain(leak);
}

/** What the client can read of the state a write touches, to compare before and after. */
async function observable(api: Api): Promise<Record<string, unknown>> {
  const read = async (path: string) => {
    const res = await api.get(path);
    return res.status === 200 ? res.json.data : res.status;
  };
  const k1 = await read(`${MOUNT}/keys/k1`);
  return {
    k1: typeof k1 === 'object' ? { latest: (k1 as { latest_version: number }).latest_version, deletion: (k1 as { deletion_allowed: boolean }).deletion_allowed } : k1,
    newKey: (await api.get(`${MOUNT}/keys/new-key`)).status,
    upserted: (await api.get(`${MOUNT}/keys/upserted`)).status,
    p0: (await api.get('sys/policies/acl/p0')).status,
    p1: (await api.get('sys/policies/acl/p1')).status,
    mounts: Object.keys(((await api.get('sys/mounts')).json?.data ?? {}) as object).sort(),
    tune: (await api.get(`sys/mounts/${MOUNT}/tune`)).json?.data?.default_lease_ttl,
    term: (await api.get('sys/key-status')).json?.data?.term,
    role: (await api.get('auth/token/roles/r1')).status,
    accessors: ((await api.list('auth/token/accessors')).json?.data?.keys ?? []).length,
  };
}

/** The partial effect of disabling a mount: the table without it, and some of its own data deleted. */
function mountRemoval(uuid: string): (changes: readonly string[]) => boolean {
  return (changes) => changes.every((c) => c === 'changed core/mounts' || c.startsWith(`deleted logical/${uuid}/`));
}

describe('failure of dependencies', function () {
  this.timeout(120_000);

  describe('storage (LevelDB behind a wrapper that fails on demand)', () => {
    let dir: { path: string; remove: () => Promise<void> };
    let faulty: FaultyStorage;
    let server: ReliabilityServer;
    let world: { parent: string };
    let cases: Write[];

    beforeEach(async () => {
      dir = await tempDir('keywarden-deps-');
      faulty = new FaultyStorage(await LevelDbStorage.open(dir.path));
      server = await startReliabilityServer({ physical: faulty });
      world = await prepare(server);
      const doomed = (await server.api.expect('GET', 'sys/mounts/deps/doomed', undefined, [200])).json.data.uuid as string;
      cases = writes().map((w) => bind(w.path === 'sys/mounts/deps/doomed' ? { ...w, partial: mountRemoval(doomed) } : w, world));
    });
    afterEach(async () => {
      faulty.heal();
      await server.close();
      await dir.remove();
    });

    it('with the disk full, every kind of write fails with a clean 5xx, changes nothing, and succeeds once there is room', async () => {
      for (const write of cases) {
        const before = await snapshot(faulty.underlying);
        const seen = await observable(server.api);
        faulty.fail({ kind: 'writes' });
        const res = await server.api.request(write.method, write.path, write.body);
        faulty.heal();
        expectCleanFailure(res, write.what);
        expect(diffSnapshots(before, await snapshot(faulty.underlying)), `${write.what}: storage after the failure`).to.deep.equal([]);
        expect(await observable(server.api), `${write.what}: what clients see after the failure`).to.deep.equal(seen);
        const retried = await server.api.request(write.method, write.path, write.body);
        expect(retried.status, `${write.what} once the disk has room: ${retried.text}`).to.be.oneOf([200, 204]);
      }
    });

    it('with the disk filling up in the middle of a request, a failed write leaves nothing half-written', async () => {
      let failures = 0;
      const partials: string[] = [];
      for (const write of cases) {
        for (let allowed = 0; ; allowed++) {
          const before = await snapshot(faulty.underlying);
          faulty.fail({ kind: 'writes-after', allowed });
          const res = await server.api.request(write.method, write.path, write.body);
          faulty.heal();
          if (res.status < 300) break;
          failures++;
          expectCleanFailure(res, `${write.what} (disk full after ${allowed} writes)`);
          const changes = diffSnapshots(before, await snapshot(faulty.underlying));
          if (changes.length > 0 && write.partial?.(changes)) {
            partials.push(`${write.what} at write ${allowed + 1}: ${changes.length} entries`);
            continue;
          }
          expect(changes, `${write.what}: storage after failing at write ${allowed + 1}`).to.deep.equal([]);
          expect(allowed, `${write.what} never succeeds`).to.be.below(20);
        }
      }
      expect(failures).to.be.at.least(cases.length);
      // Disabling a mount is complete for clients even when its data could not all be deleted.
      expect(Object.keys((await server.api.expect('GET', 'sys/mounts', undefined, [200])).json.data)).to.not.include('deps/doomed/');
      if (partials.length > 0) console.log(`      partial effects (deletions only, completed by a retry or unreachable): ${partials.join('; ')}`);
    });

    it('a failed key rotation is not used afterwards: what is encrypted after the disk recovers decrypts after a reload', async () => {
      const api = server.api;
      faulty.fail({ kind: 'writes' });
      expectCleanFailure(await api.post(`${MOUNT}/keys/k1/rotate`), 'rotate');
      faulty.heal();
      const encrypted = await api.expect('POST', `${MOUNT}/encrypt/k1`, { plaintext: b64('after the fault') }, [200]);
      expect(encrypted.json.data.ciphertext).to.match(/^vault:v1:/);
      // A reload rebuilds the backend from storage: only what was stored counts now.
      await api.expect('POST', 'sys/plugins/reload/backend', { mounts: [MOUNT] });
      const decrypted = await api.expect('POST', `${MOUNT}/decrypt/k1`, { ciphertext: encrypted.json.data.ciphertext }, [200]);
      expect(Buffer.from(decrypted.json.data.plaintext as string, 'base64').toString()).to.equal('after the fault');
    });

    it('a failed barrier rotation is not used afterwards: values written after recovery read back after a restart of the seal', async () => {
      const api = server.api;
      const term = (await api.expect('GET', 'sys/key-status', undefined, [200])).json.data.term as number;
      faulty.fail({ kind: 'writes' });
      expectCleanFailure(await api.post('sys/rotate'), 'sys/rotate');
      faulty.heal();
      expect((await api.expect('GET', 'sys/key-status', undefined, [200])).json.data.term).to.equal(term);
      await api.expect('POST', `${MOUNT}/keys/after-fault`, {});
      await server.host.seal.seal();
      await server.unseal();
      expect((await api.get(`${MOUNT}/keys/after-fault`)).status).to.equal(200);
    });

    it('with the database broken, requests that need it answer 503 without internals (never a 403 or a wrong answer), and all recovers when it clears', async () => {
      const api = server.api;
      // Needs storage whatever is cached: listing, creating, writing.
      const needStorage: [string, string, unknown?][] = [
        ['LIST', `${MOUNT}/keys`],
        ['POST', `${MOUNT}/keys/fresh`, { type: 'aes256-gcm96' }],
        ['POST', `${MOUNT}/encrypt/fresh-upsert`, { plaintext: b64('x') }],
        ['POST', 'auth/token/create', {}],
        ['POST', 'sys/policies/acl/p9', { policy: 'path "y/*" { capabilities = ["read"] }' }],
        ['LIST', 'auth/token/accessors'],
      ];
      // May be served from memory (token and key caches); if not, the same clean 503.
      const mayBeCached: [string, string, unknown?][] = [
        ['GET', `${MOUNT}/keys/k1`],
        ['POST', `${MOUNT}/encrypt/k1`, { plaintext: b64('x') }],
        ['GET', 'auth/token/lookup-self'],
        ['GET', 'sys/mounts'],
        ['GET', 'sys/policies/acl/p0'],
      ];
      faulty.fail({ kind: 'all' });
      for (const [method, path, body] of needStorage) expectCleanFailure(await api.request(method, path, body), `${method} ${path}`);
      for (const [method, path, body] of mayBeCached) {
        const res = await api.request(method, path, body);
        if (res.status !== 200) expectCleanFailure(res, `${method} ${path}`);
      }
      faulty.heal();
      for (const [method, path, body] of [...needStorage, ...mayBeCached]) {
        const res = await api.request(method, path, body);
        expect(res.status, `${method} ${path} after recovery: ${res.text}`).to.be.oneOf([200, 204]);
      }
    });

    it('with the LevelDB handle lost (closed underneath), requests answer 503 from LevelDB\'s own errors; a reopened database serves again', async () => {
      const api = server.api;
      const lost = faulty.swap(faulty.underlying);
      await lost.close();
      const res = await api.list(`${MOUNT}/keys`);
      expectCleanFailure(res, 'list with the database closed');
      expect(res.status).to.equal(503);
      faulty.swap(await LevelDbStorage.open(dir.path));
      const back = await api.list(`${MOUNT}/keys`);
      expect(back.status, back.text).to.equal(200);
    });
  });

  describe('the cloud provider', () => {
    let server: ReliabilityServer | undefined;
    const network = { guard: undefined as ReturnType<typeof guardOutboundConnections> | undefined };

    before(async function () {
      server = await startReliabilityServer();
      expect(cloudLoginMissing(server)).to.equal(undefined);
      network.guard = guardOutboundConnections();
      await server.api.expect('POST', 'sys/auth/cloud', { type: 'cloud' });
    });
    after(async () => {
      network.guard?.restore();
      await server?.close();
    });

    for (const [behaviour, label] of [
      ['unreachable', 'unreachable (connection refused)'],
      ['hang', 'accepting the connection and never answering'],
      ['server-error', 'answering 503'],
      ['garbage', 'answering garbage'],
      ['sts-error', 'answering an STS error document'],
    ] as const) {
      it(`a login with the provider ${label} fails with a clear error within the configured retries and timeouts`, async () => {
        const api = server!.api;
        const canary = await startCanary(behaviour === 'unreachable' ? 'sts-error' : behaviour);
        const endpoint = behaviour === 'unreachable' ? await closedPortUrl() : canary.url;
        try {
          // One retry shows the limit is kept; none for the hanging provider, whose every attempt waits out the timeout.
          const retries = behaviour === 'hang' ? 0 : 1;
          await api.expect('POST', 'auth/cloud/config/client', { access_key: 'AKIADEPS', secret_key: 'deps-secret', sts_endpoint: endpoint, sts_region: 'us-east-1', max_retries: retries });
          const started = Date.now();
          const res = await api.request('POST', 'auth/cloud/login', iamLogin(), '');
          const elapsed = Date.now() - started;
          expect(res.status, res.text).to.be.within(400, 504);
          expect(res.status, res.text).to.not.equal(500);
          expect(res.json?.errors?.[0], res.text).to.be.a('string').and.not.equal('internal error');
          expect(res.text).to.not.contain('deps-secret');
          if (behaviour !== 'unreachable') expect(canary.requests.length, 'requests the provider got (1 + max_retries at most)').to.be.within(1, 1 + retries);
          console.log(`      ${behaviour}: ${res.status} in ${elapsed} ms: ${res.json?.errors?.[0]}`);
        } finally {
          await canary.close();
        }
      });
    }
  });
});
