/**
 * Snapshots of the whole store over HTTP, as an operator's tooling uses them, on LevelDB and on
 * PostgreSQL: save, write more, restore, and get exactly the snapshot's state back; a corrupt,
 * truncated, foreign or wrong-format snapshot is refused and changes nothing; another cluster's
 * snapshot goes in only with snapshot-force, and the server then opens with that cluster's shares;
 * a snapshot of this cluster altered since it was made is refused even forced; and policies decide
 * Keywarden's and Vault's names of the snapshot paths as one resource.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../../core/server.js';
import notesPlugin from '../../fixtures/plugins/notes.js';
import { SnapshotFormatError, SnapshotReader, writeSnapshot } from '../../../storage/snapshot-format.js';
import type { StoredEntry } from '../../../storage/storage.js';
import { TestClient } from '../../helpers/http.js';
import { createTestDatabase } from '../../helpers/postgres.js';
import http from 'node:http';
import { initAndUnseal, startUnsealedServer, testConfig } from '../../helpers/server.js';

type Server = RunningServer & { client: TestClient };

interface Backend {
  readonly name: string;
  start(): Promise<Server>;
}

const dirs: string[] = [];

const backends: Backend[] = [
  {
    name: 'LevelDB',
    start: async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'keywarden-snapshot-test-'));
      dirs.push(dir);
      return start({ kind: 'leveldb', path: path.join(dir, 'data') });
    },
  },
  {
    name: 'PostgreSQL',
    start: async () => start({ kind: 'postgresql', connectionUrl: await createTestDatabase(), table: 'keywarden_store', haEnabled: false, maxParallel: 4 }),
  },
];

async function start(storage: ReturnType<typeof testConfig>['storage']): Promise<Server> {
  const server = await startServer({ config: { ...testConfig(), storage }, plugins: [notesPlugin], logger: pino({ level: 'silent' }) });
  return Object.assign(server, { client: new TestClient(server.address) });
}

after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

for (const backend of backends) {
  describe(`sys/storage/snapshot on ${backend.name}`, function () {
    this.timeout(60_000);
    let server: Server;
    let shares: string[];
    const servers: Server[] = [];

    before(async () => {
      server = await backend.start();
      servers.push(server);
      shares = (await initAndUnseal(server, 3, 2)).keys;
      await ok(server.client.post('sys/mounts/notes', { type: 'notes' }));
    });
    after(async () => {
      for (const s of servers) await s.close();
    });

    it('restores exactly the state a snapshot was taken in, while the server keeps serving', async () => {
      const { client } = server;
      await ok(client.post('notes/notes/kept', { text: 'before' }));
      await ok(client.post('notes/notes/changed', { text: 'before' }));
      await ok(client.put('sys/policy/before', { policy: 'path "notes/*" { capabilities = ["read"] }' }));
      await ok(client.post('cubbyhole/mine', { secret: 'before' }));

      const saved = await client.get('sys/storage/raft/snapshot');
      expect(saved.status, saved.text).to.equal(200);
      expect(saved.headers['content-type']).to.equal('application/octet-stream');
      expect(saved.bytes.subarray(0, 8).toString('latin1')).to.equal('KWSNAP\r\n');
      // Values stay barrier ciphertext: no stored value appears in the file (keys do, as in the store).
      expect(saved.bytes.includes(Buffer.from('capabilities'))).to.equal(false);
      expect(saved.bytes.includes(Buffer.from('"text"'))).to.equal(false);

      await ok(client.post('notes/notes/changed', { text: 'after' }));
      await ok(client.post('notes/notes/added', { text: 'after' }));
      await ok(client.delete('sys/policy/before'));
      await ok(client.put('sys/policy/after', { policy: 'path "x" { capabilities = ["read"] }' }));
      await ok(client.post('sys/mounts/later', { type: 'notes' }));
      await ok(client.post('cubbyhole/mine', { secret: 'after' }));
      await ok(client.post('sys/rotate'));
      expect((await client.get('sys/key-status')).body.data.term).to.equal(2);

      const restored = await client.post('sys/storage/snapshot', undefined, { rawBody: saved.bytes });
      expect(restored.status, restored.text).to.equal(204);

      expect((await client.get('notes/notes/kept')).body.data.text).to.equal('before');
      expect((await client.get('notes/notes/changed')).body.data.text).to.equal('before');
      expect((await client.get('notes/notes/added')).status).to.equal(404);
      expect((await client.get('sys/policy/before')).status).to.equal(200);
      expect((await client.get('sys/policy/after')).status).to.equal(404);
      expect(Object.keys((await client.get('sys/mounts')).body.data)).to.include('notes/').and.not.include('later/');
      expect((await client.get('cubbyhole/mine')).body.data.secret).to.equal('before');
      expect((await client.get('sys/key-status')).body.data.term).to.equal(1);
      expect((await client.get('sys/seal-status')).body.sealed).to.equal(false);
      // Writes after the restore land in the restored store.
      await ok(client.post('notes/notes/added', { text: 'again' }));
      expect((await client.get('notes/notes/added')).body.data.text).to.equal('again');
    });

    it('serves requests during a restore: none fails, and each write lands either before it (gone) or after it (kept)', async () => {
      const { client } = server;
      const saved = (await client.get('sys/storage/snapshot')).bytes;
      let stop = false;
      const statuses: number[] = [];
      const written: number[] = [];
      const writer = (async () => {
        for (let i = 0; !stop || i < 5; i++) {
          const res = await client.post(`notes/notes/during-${i}`, { text: String(i) });
          statuses.push(res.status);
          written.push(i);
        }
      })();
      const reader = (async () => {
        while (!stop) statuses.push((await client.get('notes/notes/kept')).status);
      })();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const restored = await client.post('sys/storage/snapshot', undefined, { rawBody: saved });
      stop = true;
      await Promise.all([writer, reader]);
      expect(restored.status, restored.text).to.equal(204);
      expect(statuses.filter((status) => status !== 200 && status !== 204)).to.deep.equal([]);
      const present: boolean[] = [];
      for (const i of written) present.push((await client.get(`notes/notes/during-${i}`)).status === 200);
      // Writes are sequential: those before the replacement are gone, every one after it is kept.
      const firstKept = present.indexOf(true);
      expect(firstKept, 'some writes came after the restore').to.be.greaterThan(-1);
      expect(present.slice(firstKept).every(Boolean), present.join()).to.equal(true);
    });

    it('refuses a corrupt, truncated, empty or wrong-format snapshot and changes nothing', async () => {
      const { client } = server;
      await ok(client.post('notes/notes/marker', { text: 'before' }));
      const saved = (await client.get('sys/storage/snapshot')).bytes;
      await ok(client.post('notes/notes/marker', { text: 'after' }));

      const corrupt = Buffer.from(saved);
      corrupt[Math.floor(corrupt.length / 2)]! ^= 0x01;
      const lastByte = Buffer.from(saved);
      lastByte[lastByte.length - 1]! ^= 0x80;
      const cases: Array<[string, Buffer, RegExp]> = [
        ['a changed byte', corrupt, /corrupt/],
        ['a changed checksum', lastByte, /corrupt/],
        ['a truncated file', saved.subarray(0, saved.length - 40), /truncated/],
        ['a file cut in its header', saved.subarray(0, 10), /truncated/],
        ['an empty body', Buffer.alloc(0), /no snapshot/],
        ['extra bytes after the end', Buffer.concat([saved, Buffer.from('x')]), /after its end/],
        ['another format', Buffer.from(JSON.stringify({ data: 'not a snapshot' })), /not a Keywarden snapshot/],
      ];
      for (const [what, body, message] of cases) {
        for (const spelling of ['sys/storage/snapshot', 'sys/storage/raft/snapshot-force']) {
          const res = await client.post(spelling, undefined, { rawBody: body });
          expect(res.status, `${what} on ${spelling}: ${res.text}`).to.equal(400);
          expect(res.body.errors[0], what).to.match(message);
        }
      }
      expect((await client.get('notes/notes/marker')).body.data.text).to.equal('after');
      expect((await client.get('sys/seal-status')).body.sealed).to.equal(false);
    });

    it('needs sudo: a token that may only update the path is refused before the body is read', async () => {
      const { client } = server;
      await ok(client.put('sys/policy/snapshotter', { policy: 'path "sys/storage/*" { capabilities = ["read", "update"] }' }));
      const token = (await client.post('auth/token/create', { policies: ['snapshotter'] })).body.auth.client_token as string;
      expect((await client.get('sys/storage/snapshot', { token })).status).to.equal(403);
      expect((await client.post('sys/storage/snapshot', undefined, { token, rawBody: Buffer.alloc(1024, 1) })).status).to.equal(403);
      expect((await client.post('sys/storage/snapshot', undefined, { token: '', rawBody: Buffer.alloc(16) })).status).to.equal(403);
    });

    it('decides both names of a snapshot path by the rules for both: a deny on either blocks both, a grant on either serves both', async () => {
      const { client } = server;
      const tokenFor = async (name: string, policy: string) => {
        await ok(client.put(`sys/policy/${name}`, { policy }));
        return (await client.post('auth/token/create', { policies: [name] })).body.auth.client_token as string;
      };
      const broad = 'path "sys/*" { capabilities = ["read", "update", "sudo"] }\n';
      const noRaft = await tokenFor('no-raft-snapshot', `${broad}path "sys/storage/raft/snapshot" { capabilities = ["deny"] }`);
      const noForce = await tokenFor('no-snapshot-force', `${broad}path "sys/storage/snapshot-force" { capabilities = ["deny"] }`);
      const narrower = await tokenFor('snapshot-no-sudo', `${broad}path "sys/storage/snapshot" { capabilities = ["read"] }`);
      for (const token of [noRaft, narrower]) {
        for (const name of ['sys/storage/snapshot', 'sys/storage/raft/snapshot']) {
          expect((await client.get(name, { token })).status, name).to.equal(403);
        }
      }
      for (const name of ['sys/storage/snapshot-force', 'sys/storage/raft/snapshot-force']) {
        expect((await client.post(name, undefined, { token: noForce, rawBody: Buffer.alloc(64, 1) })).status, name).to.equal(403);
      }
      const self = await client.post('sys/capabilities-self', { paths: ['sys/storage/snapshot', 'sys/storage/raft/snapshot'] }, { token: noRaft });
      expect(self.body.data).to.deep.include({ 'sys/storage/snapshot': ['deny'], 'sys/storage/raft/snapshot': ['deny'] });

      const vaultStyle = await tokenFor('vault-snapshots', 'path "sys/storage/raft/snapshot" { capabilities = ["read", "sudo"] }');
      const keywardenStyle = await tokenFor('keywarden-snapshots', 'path "sys/storage/snapshot" { capabilities = ["read", "sudo"] }');
      for (const token of [vaultStyle, keywardenStyle]) {
        for (const name of ['sys/storage/snapshot', 'sys/storage/raft/snapshot']) {
          expect((await client.get(name, { token })).status, name).to.equal(200);
        }
      }
    });

    it('refuses a snapshot of this cluster with entries spliced in and the checksum made again, even forced, and changes nothing', async () => {
      const { client } = server;
      await ok(client.put('sys/policy/rolled', { policy: 'path "notes/*" { capabilities = ["read", "update"] }' }));
      const before = (await client.get('sys/storage/snapshot')).bytes;
      const current = 'path "notes/*" { capabilities = ["read"] }';
      await ok(client.put('sys/policy/rolled', { policy: current }));
      const now = (await client.get('sys/storage/snapshot')).bytes;

      // The current snapshot with the policy's older value spliced in, and a checksum that matches again.
      const oldPolicy = (await entriesOf(before)).find((entry) => entry.key === 'sys/policy/rolled')!;
      const spliced = (await entriesOf(now)).map((entry) => (entry.key === oldPolicy.key ? oldPolicy : entry));
      const header = await new SnapshotReader(bytesOf(now)).header();
      const pieces: Buffer[] = [];
      for await (const piece of writeSnapshot(header, each(spliced), () => randomBytes(32))) pieces.push(piece);
      const altered = Buffer.concat(pieces);

      for (const name of ['sys/storage/snapshot-force', 'sys/storage/raft/snapshot-force', 'sys/storage/snapshot']) {
        const res = await client.post(name, undefined, { rawBody: altered });
        expect(res.status, `${name}: ${res.text}`).to.equal(400);
        expect(res.body.errors[0]).to.match(/altered/);
      }
      expect((await client.get('sys/policy/rolled')).body.data.rules).to.equal(current);
      expect((await client.get('sys/seal-status')).body.sealed).to.equal(false);
    });

    it("refuses another cluster's snapshot unless forced; forced, the server seals and opens with that cluster's shares", async () => {
      await ok(server.client.post('notes/notes/origin', { text: 'first cluster' }));
      const saved = (await server.client.get('sys/storage/snapshot')).bytes;

      const other = await backend.start();
      servers.push(other);
      await initAndUnseal(other, 1, 1);
      await ok(other.client.post('sys/mounts/other', { type: 'notes' }));

      const refused = await other.client.post('sys/storage/snapshot', undefined, { rawBody: saved });
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.body.errors[0]).to.match(/another cluster.*snapshot-force/);
      expect(Object.keys((await other.client.get('sys/mounts')).body.data)).to.include('other/');

      const forced = await other.client.post('sys/storage/snapshot-force', undefined, { rawBody: saved });
      expect(forced.status, forced.text).to.equal(200);
      expect(forced.body.warnings[0]).to.match(/sealed itself/);
      expect((await other.client.get('sys/seal-status')).body).to.include({ sealed: true, t: 2, n: 3 });

      for (const key of shares.slice(1, 3)) await other.client.put('sys/unseal', { key });
      expect((await other.client.get('sys/seal-status')).body.sealed).to.equal(false);
      // The first cluster's root token and data, not the second's.
      other.client.token = server.client.token;
      expect((await other.client.get('notes/notes/origin')).body.data.text).to.equal('first cluster');
      expect(Object.keys((await other.client.get('sys/mounts')).body.data)).to.include('notes/').and.not.include('other/');
    });
  });
}

describe('sys/storage/snapshot while the server seals', function () {
  this.timeout(60_000);

  it('ends a save cut short by a seal without its trailer (the connection is cut), so the file reads as truncated', async () => {
    const server = await startUnsealedServer();
    try {
      const value = Buffer.alloc(1000, 7);
      for (let i = 0; i < 20; i++) {
        await server.host.barrier.batch(Array.from({ length: 500 }, (_, j) => ({ type: 'put' as const, key: `logical/x/${i}/${j}`, value })));
      }
      const received: Buffer[] = [];
      const outcome = await new Promise<string>((resolve, reject) => {
        const url = new URL(`${server.address}/v1/sys/storage/snapshot`);
        const req = http.get(url, { headers: { 'X-Vault-Token': server.rootToken }, agent: false }, (res) => {
          let paused = false;
          res.on('data', (chunk: Buffer) => {
            received.push(chunk);
            if (paused) return;
            paused = true;
            // Hold the stream back while the server seals, then read on.
            res.pause();
            server.client.put('sys/seal').then((sealed) => {
              expect(sealed.status).to.equal(204);
              res.resume();
            }, reject);
          });
          res.on('end', () => resolve('ended'));
          res.on('aborted', () => resolve('aborted'));
          res.on('error', () => resolve('aborted'));
        });
        req.on('error', () => resolve('aborted'));
      });
      expect(outcome).to.equal('aborted');
      const reader = new SnapshotReader(
        (async function* () {
          yield Buffer.concat(received);
        })(),
      );
      let refused: unknown;
      try {
        for await (const entry of reader.entries()) expect(entry.key).to.be.a('string');
      } catch (err) {
        refused = err;
      }
      expect(refused).to.be.instanceOf(SnapshotFormatError);
      expect((refused as Error).message).to.match(/truncated/);
    } finally {
      await server.close();
    }
  });
});

/** The entries of a saved snapshot, checked. */
async function entriesOf(saved: Buffer): Promise<StoredEntry[]> {
  const entries: StoredEntry[] = [];
  for await (const entry of new SnapshotReader(bytesOf(saved)).entries()) entries.push({ key: entry.key, value: Buffer.from(entry.value) });
  return entries;
}

async function* bytesOf(saved: Buffer): AsyncGenerator<Buffer> {
  yield saved;
}

async function* each<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

async function ok(pending: Promise<{ status: number; text: string }>): Promise<void> {
  const res = await pending;
  expect(res.status, res.text).to.be.oneOf([200, 204]);
}
