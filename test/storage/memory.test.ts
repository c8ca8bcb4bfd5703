import { expect } from 'chai';
import { UnavailableError } from '../../core/errors.js';
import { MemoryStorage } from '../../storage/memory.js';
import { caught } from './helpers.js';
import { describeStorageContract } from './storage-contract.js';
import { describeSnapshotContract } from './snapshot-contract.js';

describeStorageContract('MemoryStorage', async () => {
  const storage = new MemoryStorage();
  return { storage, teardown: () => storage.close() };
});

describeSnapshotContract('MemoryStorage', async () => {
  const storage = new MemoryStorage();
  return { storage, teardown: () => storage.close() };
});

describe('MemoryStorage', () => {
  it('reports its kind as "inmem"', () => {
    expect(new MemoryStorage().kind).to.equal('inmem');
  });

  it('refuses every operation once closed', async () => {
    const storage = new MemoryStorage();
    await storage.put('k', new Uint8Array([1]));
    await storage.close();
    for (const op of [
      () => storage.get('k'),
      () => storage.put('k', new Uint8Array([2])),
      () => storage.delete('k'),
      () => storage.list(''),
      () => storage.batch([]),
    ]) {
      expect(await caught(op())).to.be.instanceOf(UnavailableError);
    }
  });

  it('lists a folder of many keys as one entry between its siblings', async () => {
    const storage = new MemoryStorage();
    for (let i = 0; i < 1000; i++) await storage.put(`m/big/${String(i).padStart(4, '0')}`, new Uint8Array([1]));
    await storage.put('m/a', new Uint8Array([1]));
    await storage.put('m/c', new Uint8Array([1]));
    expect(await storage.list('m/')).to.deep.equal(['a', 'big/', 'c']);
  });
});
