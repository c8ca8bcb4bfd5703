import { expect } from 'chai';
import { chown, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnavailableError } from '../../core/errors.js';
import { LevelDbStorage, StorageLockedError } from '../../storage/leveldb.js';
import { bytes, caught, text } from './helpers.js';
import { describeStorageContract } from './storage-contract.js';
import { describeSnapshotContract } from './snapshot-contract.js';
import { canChown, expectPrivateTree, modesUnder, octal, openUp } from '../helpers/files.js';

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'keywarden-leveldb-'));
}

async function levelDbFixture() {
  const dir = await tempDir();
  const storage = await LevelDbStorage.open(dir);
  return {
    storage,
    teardown: async () => {
      await storage.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describeStorageContract('LevelDbStorage', levelDbFixture);
describeSnapshotContract('LevelDbStorage', levelDbFixture);

describe('LevelDbStorage', () => {
  let dir: string;
  const open: LevelDbStorage[] = [];

  beforeEach(async () => {
    dir = await tempDir();
  });

  afterEach(async () => {
    for (const storage of open.splice(0)) await storage.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  async function openAt(path: string): Promise<LevelDbStorage> {
    const storage = await LevelDbStorage.open(path);
    open.push(storage);
    return storage;
  }

  it('reports its kind as "leveldb"', async () => {
    expect((await openAt(dir)).kind).to.equal('leveldb');
  });

  it('open creates a missing directory, parents included, with mode 0700 whatever the umask', async () => {
    const previous = process.umask(0o022);
    let storage: LevelDbStorage;
    try {
      storage = await openAt(join(dir, 'nested', 'data'));
    } finally {
      process.umask(previous);
    }
    await storage.put('k', bytes('v'));
    expect(text(await storage.get('k'))).to.equal('v');
    expect(octal((await stat(join(dir, 'nested'))).mode & 0o7777)).to.equal('0700');
    expect(octal((await stat(join(dir, 'nested', 'data'))).mode & 0o7777)).to.equal('0700');
  });

  it('open makes a directory left open to group and others private, files included, and reports its path and old mode', async () => {
    const data = join(dir, 'data');
    await (await LevelDbStorage.open(data)).close();
    await openUp(data);
    const warnings: string[] = [];
    // With the umask `keywarden server` sets, so that what LevelDB creates on opening is private too
    // and any file left open to others is one the old store had.
    const previous = process.umask(0o077);
    try {
      await (await LevelDbStorage.open(data, { onWarning: (message) => warnings.push(message) })).close();
    } finally {
      process.umask(previous);
    }
    await expectPrivateTree(data);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(new RegExp(`^storage directory "${data}" was open to group or others \\(mode 0755\\): changed it to 0700 and removed group and other access from \\d+ file\\(s\\) in it$`));
  });

  it('open leaves a private directory alone and warns about nothing', async () => {
    const warnings: string[] = [];
    await (await LevelDbStorage.open(dir, { onWarning: (message) => warnings.push(message) })).close();
    await (await LevelDbStorage.open(dir, { onWarning: (message) => warnings.push(message) })).close();
    expect(warnings).to.deep.equal([]);
  });

  it('open refuses a directory open to others that belongs to another user, and leaves it as it was', async function () {
    if (!canChown()) this.skip();
    const data = join(dir, 'data');
    await mkdir(data, { mode: 0o755 });
    await chown(data, 65534, 65534);
    const before = await modesUnder(data);
    const err = await caught(LevelDbStorage.open(data));
    expect(err).to.be.instanceOf(UnavailableError);
    expect(err.message).to.equal(
      `storage directory "${data}" is open to group or others (mode 0755) and belongs to user 65534, not to this process's user 0: ` +
        'make it private (chmod 700) or run as its owner',
    );
    expect(await modesUnder(data)).to.deep.equal(before);
  });

  it('a reopened store sees what was written before it was closed', async () => {
    const first = await LevelDbStorage.open(dir);
    await first.put('core/a', bytes('a'));
    await first.batch([{ type: 'put', key: 'core/b', value: bytes('b') }, { type: 'delete', key: 'core/a' }]);
    await first.close();

    const second = await openAt(dir);
    expect(await second.get('core/a')).to.equal(undefined);
    expect(text(await second.get('core/b'))).to.equal('b');
    expect(await second.list('core/')).to.deep.equal(['b']);
  });

  it('opening a directory that is already open fails with StorageLockedError and a clear message', async () => {
    await openAt(dir);
    const err = await caught(LevelDbStorage.open(dir));
    expect(err).to.be.instanceOf(StorageLockedError);
    expect(err).to.be.instanceOf(UnavailableError);
    expect(err.message).to.equal(
      `storage directory "${dir}" is locked by another process (is another Keywarden server running?)`,
    );
  });

  it('the directory can be opened again once the holder closes it', async () => {
    const first = await LevelDbStorage.open(dir);
    await first.close();
    const second = await openAt(dir);
    await second.put('k', bytes('v'));
  });

  it('lists a folder larger than one read-ahead chunk as one entry between its siblings', async () => {
    const storage = await openAt(dir);
    const ops = Array.from({ length: 1500 }, (_, i) => ({
      type: 'put' as const, key: `m/big/${String(i).padStart(5, '0')}`, value: bytes('x'),
    }));
    await storage.batch(ops);
    for (const key of ['m/a', 'm/big.txt', 'm/big0', 'm/c/1', 'm/c/2', 'm/d']) await storage.put(key, bytes('x'));
    expect(await storage.list('m/')).to.deep.equal(['a', 'big.txt', 'big/', 'big0', 'c/', 'd']);
  });

  it('lists many plain keys across read-ahead chunks without losing any', async () => {
    const storage = await openAt(dir);
    const names = Array.from({ length: 700 }, (_, i) => `k${String(i).padStart(4, '0')}`);
    await storage.batch(names.map((name) => ({ type: 'put' as const, key: `flat/${name}`, value: bytes(name) })));
    expect(await storage.list('flat/')).to.deep.equal(names);
  });

  it('a batch with an invalid op writes nothing, even after reopening', async () => {
    const first = await LevelDbStorage.open(dir);
    const err = await caught(first.batch([
      { type: 'put', key: 'good', value: bytes('1') },
      { type: 'put', key: 'bad', value: null as unknown as Uint8Array },
    ]));
    expect(err.name).to.equal('BadRequestError');
    await first.close();
    const second = await openAt(dir);
    expect(await second.get('good')).to.equal(undefined);
  });

  it('after close, operations fail with UnavailableError, not a LevelDB error', async () => {
    const storage = await LevelDbStorage.open(dir);
    await storage.close();
    for (const op of [() => storage.get('k'), () => storage.put('k', bytes('v')), () => storage.list('')]) {
      const err = await caught(op());
      expect(err).to.be.instanceOf(UnavailableError);
      expect(err.message).to.not.match(/LEVEL_|leveldb/i);
    }
  });
});
