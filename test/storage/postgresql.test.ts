import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { NotActiveError, UnavailableError } from '../../core/errors.js';
import { PostgresStorage } from '../../storage/postgresql.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { bytes, caught, text } from './helpers.js';
import { describeStorageContract } from './storage-contract.js';
import { describeSnapshotContract } from './snapshot-contract.js';

async function openStore(url: string, options: { haEnabled?: boolean; nodeId?: string; table?: string } = {}): Promise<PostgresStorage> {
  return PostgresStorage.open({ connectionUrl: url, nodeId: options.nodeId ?? randomBytes(4).toString('hex'), ...options });
}

describe('PostgresStorage', function () {
  this.timeout(60_000);
  let url: string;

  before(async () => {
    url = await createTestDatabase();
  });

  describeStorageContract('PostgresStorage', async () => {
    const table = `t_${randomBytes(4).toString('hex')}`;
    const storage = await openStore(url, { table });
    return { storage, teardown: () => storage.close() };
  });

  describeSnapshotContract('PostgresStorage', async () => {
    const table = `t_${randomBytes(4).toString('hex')}`;
    const storage = await openStore(url, { table });
    return { storage, teardown: () => storage.close() };
  });

  it('lists a folder of many keys with one probe per child, in byte order', async () => {
    const store = await openStore(url, { table: 'listing' });
    try {
      const ops = [];
      for (let i = 0; i < 2000; i++) ops.push({ type: 'put' as const, key: `big/inner/${i}`, value: bytes('x') });
      ops.push({ type: 'put' as const, key: 'big/a', value: bytes('a') });
      ops.push({ type: 'put' as const, key: 'big/\u{1F600}', value: bytes('e') });
      ops.push({ type: 'put' as const, key: 'big/\uE000', value: bytes('p') });
      ops.push({ type: 'put' as const, key: 'big0', value: bytes('sibling') });
      await store.batch(ops);
      expect(await store.list('big/')).to.deep.equal(['a', 'inner/', '\uE000', '\u{1F600}']);
      expect(await store.list('')).to.deep.equal(['big/', 'big0']);
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const plan = await admin.query(`EXPLAIN SELECT path FROM "listing" WHERE path >= 'big/' AND path < 'big0' ORDER BY path LIMIT 1`);
        expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).to.match(/Index/);
      } finally {
        await admin.end();
      }
    } finally {
      await store.close();
    }
  });

  it('refuses keys PostgreSQL text cannot hold, instead of storing another key', async () => {
    const store = await openStore(url, { table: 'oddkeys' });
    try {
      expect((await caught(store.put('a\u0000b', bytes('x')))).message).to.match(/NUL/);
      expect((await caught(store.put('a\uD800b', bytes('x')))).message).to.match(/UTF-8/);
    } finally {
      await store.close();
    }
  });

  it('tells other nodes which keys changed, and sync() waits until they have heard', async () => {
    const a = await openStore(url, { table: 'feed', nodeId: 'a' });
    const b = await openStore(url, { table: 'feed', nodeId: 'b' });
    try {
      const heard: string[] = [];
      const own: string[] = [];
      b.onRemoteChange((change) => {
        if ('keys' in change) heard.push(...change.keys);
      });
      a.onRemoteChange((change) => {
        if ('keys' in change) own.push(...change.keys);
      });
      await a.put('x/1', bytes('1'));
      await a.batch([
        { type: 'put', key: 'x/2', value: bytes('2') },
        { type: 'delete', key: 'x/1' },
      ]);
      await b.sync();
      expect(heard).to.deep.equal(['x/1', 'x/2', 'x/1']);
      expect(own, 'a node does not hear its own writes').to.deep.equal([]);
      expect(text((await b.get('x/2'))!)).to.equal('2');
      expect(await b.get('x/1')).to.equal(undefined);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('tells the other nodes to drop every cache when the whole store is replaced (a snapshot restore)', async () => {
    const a = await openStore(url, { table: 'replaced', nodeId: 'a' });
    const b = await openStore(url, { table: 'replaced', nodeId: 'b' });
    try {
      const heard: unknown[] = [];
      b.onRemoteChange((change) => heard.push(change));
      await a.put('x/1', bytes('1'));
      await a.replaceAll(
        (async function* () {
          yield { key: 'y/1', value: bytes('2') };
        })(),
      );
      await b.sync();
      expect(heard).to.deep.equal([{ keys: ['x/1'] }, { resync: true }]);
      expect(await b.get('x/1')).to.equal(undefined);
      expect(text((await b.get('y/1'))!)).to.equal('2');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('refuses to replace the store from a leader another node has taken over from', async () => {
    const a = await openStore(url, { table: 'fence_replace', nodeId: 'a', haEnabled: true });
    const b = await openStore(url, { table: 'fence_replace', nodeId: 'b', haEnabled: true });
    try {
      const first = await a.ha!.tryAcquire({ nodeId: 'a', apiAddr: 'https://a' });
      expect(first).to.not.equal(undefined);
      await a.put('k', bytes('a'));
      await first!.release();
      expect(await b.ha!.tryAcquire({ nodeId: 'b', apiAddr: 'https://b' })).to.not.equal(undefined);
      // A deposed leader (fencing with its old epoch) must not replace the store.
      const err = await caught(a.replaceAll((async function* () {})()));
      expect(err).to.be.instanceOf(NotActiveError);
      expect(text((await b.get('k'))!)).to.equal('a');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('fences the writes of a leader another node has taken over from', async () => {
    const a = await openStore(url, { table: 'fence', nodeId: 'a', haEnabled: true });
    const b = await openStore(url, { table: 'fence', nodeId: 'b', haEnabled: true });
    try {
      const lead = await a.ha!.tryAcquire({ nodeId: 'a', apiAddr: 'http://a' });
      expect(lead).to.not.equal(undefined);
      expect(await b.ha!.tryAcquire({ nodeId: 'b', apiAddr: 'http://b' }), 'the lock is held').to.equal(undefined);
      expect(await b.ha!.leader()).to.include({ nodeId: 'a', apiAddr: 'http://a' });
      await a.put('k', bytes('from a'));
      // a's lock session dies (as when its process is killed): b takes over at once.
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`SELECT pg_terminate_backend(holder_pid) FROM fence_ha WHERE name = 'leader'`);
      await admin.end();
      expect(await lead!.lost).to.be.a('string');
      let taken;
      for (let i = 0; i < 50 && !taken; i++) {
        taken = await b.ha!.tryAcquire({ nodeId: 'b', apiAddr: 'http://b' });
        if (!taken) await new Promise((r) => setTimeout(r, 50));
      }
      expect(taken!.epoch).to.be.greaterThan(lead!.epoch);
      expect(await b.ha!.leader()).to.include({ nodeId: 'b' });
      // A deposed leader's writes stay fenced with its old epoch: they fail, never go out unfenced.
      const err = await caught(a.put('k', bytes('late write from a')));
      expect(err).to.be.instanceOf(NotActiveError);
      await b.put('k', bytes('from b'));
      expect(text((await a.get('k'))!)).to.equal('from b');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('fails with a clear 503-class error when the database cannot be reached', async () => {
    const dead = 'postgres://keywarden:x@127.0.0.1:1/none';
    const err = await caught(PostgresStorage.open({ connectionUrl: dead, nodeId: 'n', connectTimeoutMs: 1000 }));
    expect(err).to.be.instanceOf(UnavailableError);
    expect(err.message).to.match(/refused the connection/);
  });
});
