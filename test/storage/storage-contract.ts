import { expect } from 'chai';
import type { BatchOp, Storage } from '../../storage/storage.js';
import { bytes, caught, text } from './helpers.js';

/** A fresh, empty store for one test, and how to dispose of it. */
export interface StorageFixture {
  storage: Storage;
  teardown?: () => Promise<void>;
}


/**
 * The behaviour every `Storage` promises, run against each implementation (physical stores, views,
 * the barrier) so they cannot drift apart.
 */
export function describeStorageContract(label: string, setup: () => Promise<StorageFixture>): void {
  describe(`${label} (Storage contract)`, () => {
    let fixture: StorageFixture;
    let storage: Storage;

    beforeEach(async () => {
      fixture = await setup();
      storage = fixture.storage;
    });

    afterEach(async () => {
      await fixture.teardown?.();
    });

    it('get returns undefined for a key never written', async () => {
      expect(await storage.get('missing/key')).to.equal(undefined);
    });

    it('get returns what put stored, and a second put replaces it', async () => {
      await storage.put('a/b', bytes('one'));
      expect(text(await storage.get('a/b'))).to.equal('one');
      await storage.put('a/b', bytes('two'));
      expect(text(await storage.get('a/b'))).to.equal('two');
    });

    it('stores an empty value as an empty value, not as absent', async () => {
      await storage.put('empty', new Uint8Array(0));
      const value = await storage.get('empty');
      expect(value).to.be.instanceOf(Uint8Array);
      expect(value!.length).to.equal(0);
    });

    it('stores every byte value unchanged', async () => {
      const all = Uint8Array.from({ length: 256 }, (_, i) => i);
      await storage.put('binary', all);
      expect(Array.from((await storage.get('binary'))!)).to.deep.equal(Array.from(all));
    });

    it('does not let a caller change stored bytes through the buffer it wrote or read', async () => {
      const value = bytes('original');
      await storage.put('k', value);
      value.fill(0);
      const read = (await storage.get('k'))!;
      read.fill(0);
      expect(text(await storage.get('k'))).to.equal('original');
    });

    it('delete removes a key, and deleting a missing key is not an error', async () => {
      await storage.put('gone', bytes('x'));
      await storage.delete('gone');
      expect(await storage.get('gone')).to.equal(undefined);
      await storage.delete('never-existed');
    });

    it('list returns immediate children, sorted, with each sub-folder once and ending in "/"', async () => {
      for (const key of ['p/b', 'p/a', 'p/dir/x', 'p/dir/y', 'p/dir/deeper/z', 'p/c', 'other/q', 'pz']) {
        await storage.put(key, bytes(key));
      }
      expect(await storage.list('p/')).to.deep.equal(['a', 'b', 'c', 'dir/']);
      expect(await storage.list('p/dir/')).to.deep.equal(['deeper/', 'x', 'y']);
    });

    it('list of the empty prefix returns the top level', async () => {
      for (const key of ['top', 'p/a', 'q/b/c']) await storage.put(key, bytes(key));
      expect(await storage.list('')).to.include.members(['p/', 'q/', 'top']);
    });

    it('list returns an empty array for a prefix with nothing under it', async () => {
      await storage.put('p/a', bytes('a'));
      expect(await storage.list('nothing/')).to.deep.equal([]);
    });

    it('list keeps siblings that sort around "/" in order and apart from the folder', async () => {
      // '-' and '.' sort before '/', '0' right after it: the folder skip must land between them.
      for (const key of ['s/b.txt', 's/b-x', 's/b/inner', 's/b/inner2', 's/b0', 's/c']) {
        await storage.put(key, bytes(key));
      }
      expect(await storage.list('s/')).to.deep.equal(['b-x', 'b.txt', 'b/', 'b0', 'c']);
    });

    it('list orders keys by code point, as UTF-8 bytes sort', async () => {
      for (const key of ['u/\u{1F600}', 'u/\uFFFD', 'u/z', 'u/\u00e9']) await storage.put(key, bytes(key));
      expect(await storage.list('u/')).to.deep.equal(['z', '\u00e9', '\uFFFD', '\u{1F600}']);
    });

    it('list with a prefix that is not a folder returns the rest of each key it begins', async () => {
      for (const key of ['ab', 'abc', 'abd/e', 'b']) await storage.put(key, bytes(key));
      expect(await storage.list('ab')).to.deep.equal(['', 'c', 'd/']);
    });

    it('batch applies puts and deletes together', async () => {
      await storage.put('b/old', bytes('old'));
      await storage.batch([
        { type: 'put', key: 'b/new1', value: bytes('1') },
        { type: 'put', key: 'b/new2', value: bytes('2') },
        { type: 'delete', key: 'b/old' },
      ]);
      expect(await storage.list('b/')).to.deep.equal(['new1', 'new2']);
      expect(text(await storage.get('b/new2'))).to.equal('2');
    });

    it('batch with one invalid op fails and applies none of the others', async () => {
      await storage.put('keep', bytes('kept'));
      const ops = [
        { type: 'put', key: 'first', value: bytes('1') },
        { type: 'delete', key: 'keep' },
        { type: 'put', key: 'broken', value: 'not bytes' },
      ] as unknown as BatchOp[];
      await caught(storage.batch(ops));
      expect(await storage.get('first')).to.equal(undefined);
      expect(text(await storage.get('keep'))).to.equal('kept');
    });

    it('an empty batch changes nothing', async () => {
      await storage.put('e/one', bytes('1'));
      await storage.batch([]);
      expect(await storage.list('e/')).to.deep.equal(['one']);
    });
  });
}
