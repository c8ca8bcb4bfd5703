import { expect } from 'chai';
import { link, lstat, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UnavailableError } from '../../core/errors.js';
import { ensurePrivateDirectory, writePrivateFile } from '../../core/private-files.js';
import { octal } from '../helpers/files.js';
import { tempDir } from '../helpers/server.js';

describe('private files', () => {
  let dir: { path: string; remove: () => Promise<void> };
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(async () => {
    await dir.remove();
  });

  const modeOf = async (file: string): Promise<string> => octal((await stat(file)).mode & 0o7777);

  it('writePrivateFile creates a file 0600 whatever the umask', async () => {
    const file = path.join(dir.path, 'secret');
    const previous = process.umask(0o000);
    try {
      await writePrivateFile(file, 'new');
    } finally {
      process.umask(previous);
    }
    expect(await modeOf(file)).to.equal('0600');
    expect(await readFile(file, 'utf8')).to.equal('new');
  });

  it('writePrivateFile replaces an existing file open to others and leaves it 0600', async () => {
    const file = path.join(dir.path, 'secret');
    await writeFile(file, 'a longer old content', { mode: 0o666 });
    await writePrivateFile(file, 'new');
    expect(await modeOf(file)).to.equal('0600');
    expect(await readFile(file, 'utf8')).to.equal('new');
  });

  it('writePrivateFile refuses a symbolic link at the path and leaves what it points at untouched, existing or not', async () => {
    const target = path.join(dir.path, 'someone-elses-file');
    await writeFile(target, 'precious', { mode: 0o644 });
    const planted = path.join(dir.path, 'token');
    await symlink(target, planted);
    const dangling = path.join(dir.path, 'dangling');
    await symlink(path.join(dir.path, 'not-yet'), dangling);
    for (const file of [planted, dangling]) {
      let refused: unknown;
      await writePrivateFile(file, 'hvs.secret').catch((err: unknown) => (refused = err));
      expect(refused, file).to.be.instanceOf(UnavailableError);
      expect((refused as Error).message).to.contain('symbolic link');
      expect((await lstat(file)).isSymbolicLink()).to.equal(true);
    }
    expect(await readFile(target, 'utf8')).to.equal('precious');
    expect(await modeOf(target)).to.equal('0644');
    expect((await readdir(dir.path)).sort()).to.deep.equal(['dangling', 'someone-elses-file', 'token']);
  });

  it('writePrivateFile replaces a hard-linked file without writing into the other link', async () => {
    const other = path.join(dir.path, 'other-name');
    await writeFile(other, 'kept', { mode: 0o644 });
    const file = path.join(dir.path, 'secret');
    await link(other, file);
    await writePrivateFile(file, 'new');
    expect(await readFile(file, 'utf8')).to.equal('new');
    expect(await modeOf(file)).to.equal('0600');
    expect(await readFile(other, 'utf8')).to.equal('kept');
    expect(await modeOf(other)).to.equal('0644');
  });

  it('ensurePrivateDirectory refuses a path that is a file, naming what it is for', async () => {
    const file = path.join(dir.path, 'not-a-dir');
    await writeFile(file, '');
    let err: unknown;
    await ensurePrivateDirectory(file, 'storage directory', () => undefined).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(UnavailableError);
    expect((err as Error).message).to.match(new RegExp(`^cannot create storage directory "${file}": EEXIST`));
  });
});
