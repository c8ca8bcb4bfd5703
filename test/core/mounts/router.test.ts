import { expect } from 'chai';
import { MountRouter } from '../../../core/mounts/router.js';
import { LiveMount } from '../../../core/mounts/live-mount.js';
import { defaultMountConfig, type MountEntry, type MountTableName } from '../../../core/mounts/mount-entry.js';
import { MemoryStorage } from '../../../storage/memory.js';

function mountAt(table: MountTableName, path: string): LiveMount {
  const entry: MountEntry = {
    table,
    path,
    type: 'notes',
    description: '',
    uuid: `uuid-${table}-${path}`,
    accessor: `notes_${path}`,
    local: false,
    seal_wrap: false,
    external_entropy_access: false,
    options: null,
    config: defaultMountConfig(),
    plugin_version: '',
  };
  return new LiveMount(entry, new MemoryStorage());
}

describe('MountRouter', () => {
  let router: MountRouter;

  beforeEach(() => {
    router = new MountRouter();
    for (const [table, path] of [['secret', 'a/'], ['secret', 'a-b/'], ['secret', 'crypto/eu/'], ['secret', 'crypto/us/'], ['auth', 'people/']] as const) {
      router.set(mountAt(table, path));
    }
  });

  it('routes a path to the mount with the longest prefix it starts with, and gives the rest', () => {
    expect(router.resolve('crypto/eu/keys/k1')).to.deep.include({ relative: 'keys/k1' });
    expect(router.resolve('crypto/eu/keys/k1')?.mount.routePrefix).to.equal('crypto/eu/');
    expect(router.resolve('a-b/x')?.mount.routePrefix).to.equal('a-b/');
    expect(router.resolve('a/x')?.mount.routePrefix).to.equal('a/');
  });

  it('finds a mount by its own path, with or without the slash', () => {
    expect(router.resolve('crypto/eu')).to.deep.include({ relative: '' });
    expect(router.resolve('crypto/eu/')).to.deep.include({ relative: '' });
    expect(router.resolve('crypto/eu')?.mount.routePrefix).to.equal('crypto/eu/');
  });

  it('routes auth methods under auth/ only', () => {
    expect(router.resolve('auth/people/login')?.relative).to.equal('login');
    expect(router.resolve('people/login')).to.equal(undefined);
  });

  it('finds nothing for a parent of mounts or a prefix of letters only', () => {
    expect(router.resolve('crypto')).to.equal(undefined);
    expect(router.resolve('crypto/')).to.equal(undefined);
    expect(router.resolve('crypto/europe/x')).to.equal(undefined);
    expect(router.resolve('ab/x')).to.equal(undefined);
  });

  it('prefers the longer of two nested prefixes whichever was added first', () => {
    const outer = mountAt('secret', 'nest/');
    const inner = mountAt('secret', 'nest/inner/');
    for (const order of [[outer, inner], [inner, outer]]) {
      const r = new MountRouter();
      for (const m of order) r.set(m);
      expect(r.resolve('nest/inner/x')?.mount).to.equal(inner);
      expect(r.resolve('nest/other')?.mount).to.equal(outer);
    }
  });

  it('forgets a deleted prefix and replaces a mount set again at the same prefix', () => {
    router.delete('a/');
    expect(router.resolve('a/x')).to.equal(undefined);
    const again = mountAt('secret', 'a-b/');
    router.set(again);
    expect(router.resolve('a-b/x')?.mount).to.equal(again);
    expect(router.all()).to.have.length(4);
  });
});
