import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, readdir, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BadRequestError } from '../../../core/errors.js';
import { FileAuditDevice } from '../../../core/audit/file-device.js';
import { DEFAULT_AUDIT_RULES, type DeviceContext } from '../../../core/audit/rules.js';
import type { AuditRequestEntry } from '../../../core/audit/entry.js';
import { caught, readEntries, tempDir } from './helpers.js';

/** A device the operator declared, in a configuration that allows prefixes. */
const DECLARED: DeviceContext = { origin: 'config', rules: { ...DEFAULT_AUDIT_RULES, allowAuditLogPrefixing: true } };

const entry = (id: string): AuditRequestEntry => ({
  time: '2024-05-01T00:00:00.000Z',
  type: 'request',
  request: { id, operation: 'read', path: 'sys/health' },
});

describe('file audit device', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  const devices: FileAuditDevice[] = [];

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterEach(async () => {
    await Promise.all(devices.splice(0).map((d) => d.close().catch(() => undefined)));
    await cleanup();
  });

  async function opened(options: Record<string, string>, context = DECLARED): Promise<FileAuditDevice> {
    const device = FileAuditDevice.fromOptions(options, context);
    devices.push(device);
    await device.open();
    return device;
  }

  it('appends one JSON line per entry, after the prefix, to a file created with mode 0600', async () => {
    const file = join(dir, 'audit.log');
    const device = await opened({ file_path: file, prefix: 'AUDIT: ' });
    await device.write(entry('a'));
    await device.write(entry('b'));
    expect((await readEntries(file, 'AUDIT: ')).map((e) => e.request.id)).to.deep.equal(['a', 'b']);
    expect((await stat(file)).mode & 0o777).to.equal(0o600);
  });

  it('keeps what the file held and applies the configured mode', async () => {
    const file = join(dir, 'existing.log');
    await writeFile(file, `${JSON.stringify(entry('old'))}\n`, { mode: 0o644 });
    const device = await opened({ file_path: file, mode: '0640' });
    await device.write(entry('new'));
    expect((await readEntries(file)).map((e) => e.request.id)).to.deep.equal(['old', 'new']);
    expect((await stat(file)).mode & 0o777).to.equal(0o640);
  });

  it('without a mode option, narrows an existing file open to group and others to 0600', async () => {
    const file = join(dir, 'loose.log');
    await writeFile(file, '');
    await chmod(file, 0o644);
    const device = await opened({ file_path: file });
    await device.write(entry('x'));
    expect((await stat(file)).mode & 0o777).to.equal(0o600);
  });

  it('creates a new file with the configured mode even under the strict umask `keywarden server` sets', async () => {
    const file = join(dir, 'shared.log');
    const previous = process.umask(0o077);
    try {
      await opened({ file_path: file, mode: '0640' });
    } finally {
      process.umask(previous);
    }
    expect((await stat(file)).mode & 0o777).to.equal(0o640);
  });

  it('with mode "0000", leaves an existing file\'s mode alone', async () => {
    const file = join(dir, 'kept-mode.log');
    await writeFile(file, '', { mode: 0o644 });
    await chmod(file, 0o644);
    const device = await opened({ file_path: file, mode: '0000' });
    await device.write(entry('x'));
    expect((await stat(file)).mode & 0o777).to.equal(0o644);
  });

  it('never interleaves entries written concurrently', async () => {
    const file = join(dir, 'busy.log');
    const device = await opened({ file_path: file });
    const big = 'x'.repeat(200_000);
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => device.write({ ...entry(String(i)), request: { id: String(i), operation: 'update', path: big } })),
    );
    const entries = await readEntries(file);
    expect(entries.map((e) => e.request.id)).to.deep.equal(Array.from({ length: 50 }, (_, i) => String(i)));
  });

  it('reopens the file for rotation: later lines go to a new file at the same path', async () => {
    const file = join(dir, 'rotate.log');
    const device = await opened({ file_path: file });
    await device.write(entry('before'));
    await rename(file, `${file}.1`);
    await device.write(entry('still-old'));
    await device.reopen();
    await device.write(entry('after'));
    expect((await readEntries(`${file}.1`)).map((e) => e.request.id)).to.deep.equal(['before', 'still-old']);
    expect((await readEntries(file)).map((e) => e.request.id)).to.deep.equal(['after']);
  });

  it('refuses to open a directory, naming the path and the OS error code', async () => {
    const err = await caught(opened({ file_path: dir }));
    expect(err).to.be.instanceOf(BadRequestError);
    expect(err.message).to.contain(dir).and.to.contain('EISDIR');
  });

  it('refuses a file under a directory that does not exist', async () => {
    const missing = join(dir, 'no-such-dir', 'audit.log');
    const err = await caught(opened({ file_path: missing }));
    expect(err).to.be.instanceOf(BadRequestError);
    expect(err.message).to.contain(missing).and.to.contain('ENOENT');
  });

  it('reports a write the OS refused (a full device)', async function () {
    if (!existsSync('/dev/full')) this.skip();
    const device = await opened({ file_path: '/dev/full' });
    const err = await caught(device.write(entry('lost')));
    expect((err as NodeJS.ErrnoException).code).to.equal('ENOSPC');
  });

  it('fails every one of many concurrent entries when the writes carrying them fail', async function () {
    if (!existsSync('/dev/full')) this.skip();
    const device = await opened({ file_path: '/dev/full' });
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => device.write(entry(String(i)))));
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as NodeJS.ErrnoException).code : 'written'))).to.deep.equal(Array(50).fill('ENOSPC'));
  });

  it('fails writes after a failed reopen, and recovers by itself once the path works again', async () => {
    const sub = join(dir, 'logs');
    await mkdir(sub);
    const file = join(sub, 'audit.log');
    const device = await opened({ file_path: file });
    await device.write(entry('one'));
    await rename(sub, join(dir, 'moved'));
    expect(await caught(device.reopen())).to.be.instanceOf(BadRequestError);
    const err = await caught(device.write(entry('two')));
    expect(err.message).to.contain('ENOENT');
    await mkdir(sub);
    await device.write(entry('three'));
    expect((await readEntries(file)).map((e) => e.request.id)).to.deep.equal(['three']);
  });

  it('refuses writes after close', async () => {
    const device = await opened({ file_path: join(dir, 'closed.log') });
    await device.close();
    expect((await caught(device.write(entry('late')))).message).to.match(/closed/);
  });

  it('"discard" writes nothing and "stdout" or "-" writes the line to standard output', async () => {
    const discard = await opened({ file_path: 'discard' });
    await discard.write(entry('gone'));

    const written: string[] = [];
    const original = process.stdout.write;
    process.stdout.write = ((chunk: string | Uint8Array, cb?: (err?: Error | null) => void) => {
      written.push(Buffer.from(chunk).toString('utf8'));
      cb?.(null);
      return true;
    }) as typeof process.stdout.write;
    try {
      for (const filePath of ['stdout', '-']) {
        const device = await opened({ file_path: filePath, prefix: '> ' });
        await device.write(entry(filePath));
      }
    } finally {
      process.stdout.write = original;
    }
    expect(written).to.deep.equal([`> ${JSON.stringify(entry('stdout'))}\n`, `> ${JSON.stringify(entry('-'))}\n`]);
  });

  describe('options', () => {
    const refusal = (options: Record<string, string>): string => {
      try {
        FileAuditDevice.fromOptions(options, DECLARED);
      } catch (err) {
        expect(err).to.be.instanceOf(BadRequestError);
        return (err as Error).message;
      }
      expect.fail(`expected ${JSON.stringify(options)} to be refused`);
    };

    it('requires file_path', () => {
      expect(refusal({})).to.match(/file_path.*required/);
      expect(refusal({ file_path: '' })).to.match(/file_path.*required/);
    });

    it('refuses a mode that is not octal, a format other than json, a bad bool and unknown options', () => {
      expect(refusal({ file_path: 'discard', mode: '0800' })).to.match(/mode/);
      expect(refusal({ file_path: 'discard', mode: 'rw' })).to.match(/mode/);
      expect(refusal({ file_path: 'discard', format: 'jsonx' })).to.match(/format.*jsonx/);
      expect(refusal({ file_path: 'discard', log_raw: 'maybe' })).to.match(/log_raw/);
      expect(refusal({ file_path: 'discard', filepath: '/tmp/x' })).to.match(/unknown.*"filepath"/);
    });

    it('parses the shared options with Go\'s bool words and Vault\'s defaults', () => {
      expect(FileAuditDevice.fromOptions({ file_path: 'discard' }, DECLARED).settings).to.deep.equal({
        format: 'json',
        logRaw: false,
        hmacAccessor: true,
        prefix: '',
        elideListResponses: false,
      });
      const device = FileAuditDevice.fromOptions(
        {
          file_path: 'discard',
          log_raw: 'True',
          hmac_accessor: '0',
          elide_list_responses: 't',
          prefix: 'p',
          format: 'json',
        },
        DECLARED,
      );
      expect(device.settings).to.deep.equal({ format: 'json', logRaw: true, hmacAccessor: false, prefix: 'p', elideListResponses: true });
      expect(FileAuditDevice.fromOptions({ file_path: '/x', mode: '644' }, DECLARED).mode).to.equal(0o644);
    });
  });

  describe('where it may write', () => {
    let plugins: string;
    let rules: DeviceContext['rules'];
    beforeEach(async () => {
      plugins = join(dir, 'plugins');
      await mkdir(plugins);
      await mkdir(join(dir, 'logs'));
      rules = { ...DEFAULT_AUDIT_RULES, pluginDirectory: plugins };
    });

    it('checks its place again at every open: a directory swapped for a link into plugin_directory is refused at the reopen', async () => {
      const device = await opened({ file_path: join(dir, 'logs', 'audit.log') }, { origin: 'api', rules });
      await device.write(entry('before'));
      await rename(join(dir, 'logs'), join(dir, 'logs.old'));
      await symlink(plugins, join(dir, 'logs'));
      const err = await caught(device.reopen());
      expect(err).to.be.instanceOf(BadRequestError);
      expect(err.message).to.match(/"file_path": ".*" is inside plugin_directory/);
      expect(await caught(device.write(entry('after')))).to.be.instanceOf(BadRequestError);
      expect(await readdir(plugins)).to.deep.equal([]);
    });

    it('a declared device follows a symbolic link the operator made, but not into plugin_directory', async () => {
      const target = join(dir, 'logs', 'real.log');
      await symlink(target, join(dir, 'logs', 'current.log'));
      const device = await opened({ file_path: join(dir, 'logs', 'current.log') }, { origin: 'config', rules });
      await device.write(entry('through the link'));
      expect((await readEntries(target)).map((e) => e.request.id)).to.deep.equal(['through the link']);

      await symlink(join(plugins, 'payload.js'), join(dir, 'logs', 'sneaky.log'));
      const err = await caught(opened({ file_path: join(dir, 'logs', 'sneaky.log') }, { origin: 'config', rules }));
      expect(err.message).to.match(/is inside plugin_directory/);
      expect(await readdir(plugins)).to.deep.equal([]);
    });
  });

  it('writes what it was given and nothing else', async () => {
    const file = join(dir, 'exact.log');
    const device = await opened({ file_path: file });
    await device.write(entry('exact'));
    expect(await readFile(file, 'utf8')).to.equal(`${JSON.stringify(entry('exact'))}\n`);
  });
});
