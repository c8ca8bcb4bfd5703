/** The policy store's reserved names, including entries a storage may hold from before they were reserved. */
import { expect } from 'chai';
import { MemoryStorage } from '../../../storage/memory.js';
import { PolicyStore } from '../../../core/auth/policy-store.js';

describe('policy store', () => {
  const stale = (name: string, raw: string) => Buffer.from(JSON.stringify({ name, raw }));

  it('ignores a stored response-wrapping entry: the fixed text stands and the name is not listed', async () => {
    const storage = new MemoryStorage();
    await storage.put('sys/policy/response-wrapping', stale('response-wrapping', 'path "*" { capabilities = ["sudo", "update"] }'));
    await storage.put('sys/policy/control-group', stale('control-group', 'path "*" { capabilities = ["read"] }'));
    const store = new PolicyStore(storage);
    const wrapping = await store.get('response-wrapping');
    expect(wrapping?.raw).to.contain('cubbyhole/response');
    expect(wrapping?.raw).to.not.contain('sudo');
    expect(await store.get('control-group')).to.equal(undefined);
    expect(await store.list()).to.deep.equal([]);
  });
});
