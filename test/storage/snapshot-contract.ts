import { expect } from 'chai';
import type { PhysicalStorage, StoredEntry } from '../../storage/storage.js';
import { bytes, caught, text } from './helpers.js';

/** A fresh, empty physical store for one test, and how to dispose of it. */
export interface PhysicalFixture {
  storage: PhysicalStorage;
  teardown?: () => Promise<void>;
}

async function all(entries: AsyncIterable<StoredEntry>): Promise<Array<[string, string | undefined]>> {
  const out: Array<[string, string | undefined]> = [];
  for await (const { key, value } of entries) out.push([key, text(value)]);
  return out;
}

async function* listed(pairs: ReadonlyArray<readonly [string, string]>, failAfter?: number): AsyncGenerator<StoredEntry> {
  let n = 0;
  for (const [key, value] of pairs) {
    if (failAfter !== undefined && n++ === failAfter) throw new Error('the snapshot broke off');
    yield { key, value: bytes(value) };
  }
}

/**
 * What snapshots need of every physical store (`entries` and `replaceAll`), run against each, so
 * a snapshot saved from one and restored into another means the same thing.
 */
export function describeSnapshotContract(label: string, setup: () => Promise<PhysicalFixture>): void {
  describe(`${label} (snapshot contract)`, () => {
    let fixture: PhysicalFixture;
    let storage: PhysicalStorage;

    beforeEach(async () => {
      fixture = await setup();
      storage = fixture.storage;
    });

    afterEach(async () => {
      await fixture.teardown?.();
    });

    it('entries yields every key and value in byte order', async () => {
      await storage.batch([
        { type: 'put', key: 'b/2', value: bytes('two') },
        { type: 'put', key: 'a', value: bytes('one') },
        { type: 'put', key: 'b/\u00e9', value: bytes('e') },
        { type: 'put', key: 'b/1', value: bytes('') },
      ]);
      expect(await all(storage.entries())).to.deep.equal([
        ['a', 'one'],
        ['b/1', ''],
        ['b/2', 'two'],
        ['b/\u00e9', 'e'],
      ]);
    });

    it('entries is one moment: writes made while it is read are not seen', async () => {
      const pairs = Array.from({ length: 3000 }, (_, i) => [`k/${String(i).padStart(5, '0')}`, `v${i}`] as const);
      await storage.batch(pairs.map(([key, value]) => ({ type: 'put' as const, key, value: bytes(value) })));
      const seen: Array<[string, string | undefined]> = [];
      let wrote = false;
      for await (const { key, value } of storage.entries()) {
        seen.push([key, text(value)]);
        if (!wrote) {
          wrote = true;
          await storage.put('k/99999', bytes('late'));
          await storage.put('k/02999', bytes('changed'));
          await storage.delete('k/01500');
        }
      }
      expect(seen).to.deep.equal(pairs.map(([k, v]) => [k, v]));
      expect(text(await storage.get('k/02999'))).to.equal('changed');
    });

    it('replaceAll replaces every key with the new ones and returns how many it wrote', async () => {
      await storage.batch([
        { type: 'put', key: 'old/1', value: bytes('x') },
        { type: 'put', key: 'both', value: bytes('old') },
      ]);
      const written = await storage.replaceAll(listed([['both', 'new'], ['new/1', 'y']]));
      expect(written).to.equal(2);
      expect(await all(storage.entries())).to.deep.equal([
        ['both', 'new'],
        ['new/1', 'y'],
      ]);
      expect(await storage.get('old/1')).to.equal(undefined);
      expect(await storage.list('')).to.deep.equal(['both', 'new/']);
    });

    it('replaceAll changes nothing when its entries fail part way', async () => {
      await storage.put('kept', bytes('yes'));
      const err = await caught(storage.replaceAll(listed([['a', '1'], ['b', '2'], ['c', '3']], 2)));
      expect(err.message).to.equal('the snapshot broke off');
      expect(await all(storage.entries())).to.deep.equal([['kept', 'yes']]);
    });

    it('replaceAll with no entries empties the store', async () => {
      await storage.put('gone', bytes('x'));
      expect(await storage.replaceAll(listed([]))).to.equal(0);
      expect(await all(storage.entries())).to.deep.equal([]);
    });
  });
}
