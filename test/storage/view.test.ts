import { expect } from 'chai';
import { BadRequestError } from '../../core/errors.js';
import { MemoryStorage } from '../../storage/memory.js';
import type { BatchOp, Storage } from '../../storage/storage.js';
import { StorageView, deletePrefix } from '../../storage/view.js';
import { bytes, caught, text } from './helpers.js';
import { describeStorageContract } from './storage-contract.js';

describeStorageContract('StorageView', async () => {
  const parent = new MemoryStorage();
  // A neighbour with a longer name, so a view that leaks past its prefix shows up in list('').
  await parent.put('logical/abcd/neighbour', bytes('n'));
  return { storage: new StorageView(parent, 'logical/abc/'), teardown: () => parent.close() };
});

describe('StorageView', () => {
  let parent: MemoryStorage;
  let view: StorageView;

  beforeEach(() => {
    parent = new MemoryStorage();
    view = new StorageView(parent, 'logical/1234/');
  });

  it('stores keys under its prefix in the parent', async () => {
    await view.put('policy/foo', bytes('v'));
    expect(text(await parent.get('logical/1234/policy/foo'))).to.equal('v');
    expect(await parent.list('logical/1234/')).to.deep.equal(['policy/']);
  });

  it('sees only keys under its prefix', async () => {
    await parent.put('logical/1234/mine', bytes('1'));
    await parent.put('logical/5678/theirs', bytes('2'));
    await parent.put('core/mounts', bytes('3'));
    expect(await view.list('')).to.deep.equal(['mine']);
    expect(await view.get('theirs')).to.equal(undefined);
  });

  it('prefixes every key of a batch', async () => {
    await view.batch([{ type: 'put', key: 'a', value: bytes('1') }, { type: 'put', key: 'b/c', value: bytes('2') }]);
    await view.batch([{ type: 'delete', key: 'a' }]);
    expect(await parent.list('logical/1234/')).to.deep.equal(['b/']);
  });

  it('views nest', async () => {
    const inner = new StorageView(view, 'keys/');
    await inner.put('k', bytes('v'));
    expect(text(await parent.get('logical/1234/keys/k'))).to.equal('v');
  });

  for (const key of ['..', '../core/keyring', 'a/../../b', 'a/..', 'a/../b']) {
    it(`refuses the key "${key}" because of its ".." segment`, async () => {
      for (const attempt of [
        view.get(key), view.put(key, bytes('x')), view.delete(key), view.list(key + '/'),
        view.batch([{ type: 'put', key: 'fine', value: bytes('x') }, { type: 'delete', key }]),
      ]) {
        expect(await caught(attempt)).to.be.instanceOf(BadRequestError);
      }
      expect(await parent.list('')).to.deep.equal([]);
    });
  }

  it('allows dots that are not a whole ".." segment', async () => {
    await view.put('a..b/.../c.', bytes('v'));
    expect(text(await view.get('a..b/.../c.'))).to.equal('v');
  });

  it('refuses a prefix that does not end in "/" or that climbs out with ".."', () => {
    expect(() => new StorageView(parent, 'logical/1234')).to.throw(BadRequestError);
    expect(() => new StorageView(parent, '')).to.throw(BadRequestError);
    expect(() => new StorageView(parent, 'logical/../core/')).to.throw(BadRequestError);
  });
});

/** Records each batch so the chunking can be checked. */
class RecordingStorage extends MemoryStorage {
  readonly batches: BatchOp[][] = [];
  override async batch(ops: readonly BatchOp[]): Promise<void> {
    this.batches.push([...ops]);
    return super.batch(ops);
  }
}

describe('deletePrefix', () => {
  async function fill(storage: Storage, keys: readonly string[]): Promise<void> {
    for (const key of keys) await storage.put(key, bytes(key));
  }

  it('deletes every key under the prefix, at any depth, and nothing beside it', async () => {
    const storage = new MemoryStorage();
    await fill(storage, ['logical/abc/a', 'logical/abc/b/c', 'logical/abc/b/d/e/f', 'logical/abcd/keep', 'logical/abc', 'core/mounts']);
    await deletePrefix(storage, 'logical/abc/');
    expect(await storage.list('logical/')).to.deep.equal(['abc', 'abcd/']);
    expect(await storage.list('')).to.deep.equal(['core/', 'logical/']);
  });

  it('deletes in batches of bounded size', async () => {
    const storage = new RecordingStorage();
    const keys = Array.from({ length: 1234 }, (_, i) => `x/${i % 3}/${i}`);
    await storage.batch(keys.map((key) => ({ type: 'put' as const, key, value: bytes(key) })));
    storage.batches.length = 0;

    await deletePrefix(storage, 'x/');

    expect(await storage.list('x/')).to.deep.equal([]);
    expect(storage.batches.length).to.be.greaterThan(1);
    for (const batch of storage.batches) expect(batch.length).to.be.at.most(500);
    expect(storage.batches.flat().length).to.equal(keys.length);
  });

  it('through a view with the empty prefix, clears just that view', async () => {
    const parent = new MemoryStorage();
    await fill(parent, ['auth/1/role/a', 'auth/1/role/b', 'auth/2/role/a']);
    await deletePrefix(new StorageView(parent, 'auth/1/'), '');
    expect(await parent.list('auth/')).to.deep.equal(['2/']);
  });

  it('on an empty prefix of an empty store does nothing', async () => {
    const storage = new RecordingStorage();
    await deletePrefix(storage, 'nothing/');
    expect(storage.batches).to.deep.equal([]);
  });
});
