import { expect } from 'chai';
import { readFile, stat, writeFile } from 'node:fs/promises';
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

  it('ensurePrivateDirectory refuses a path that is a file, naming what it is for', async () => {
    const file = path.join(dir.path, 'not-a-dir');
    await writeFile(file, '');
    let err: unknown;
    await ensurePrivateDirectory(file, 'storage directory', () => undefined).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(UnavailableError);
    expect((err as Error).message).to.match(new RegExp(`^cannot create storage directory "${file}": EEXIST`));
  });
});
