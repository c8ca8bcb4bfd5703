/**
 * What a token with sudo on `sys/audit` can make an audit device do, through HTTP against a real
 * server: nothing unless the configuration file allows API creation, and even then no write into
 * plugin_directory or the storage directory, no executable or widened mode, no symbolic link or
 * special file, and no socket the configuration does not list.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { chmod, mkdir, open, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { API_AUDIT, startUnsealedServer, tempDir, type TestServerOptions } from '../../helpers/server.js';
import type { TestResponse } from '../../helpers/http.js';
import { octal } from '../../helpers/files.js';
import { streamCollector, type Collector } from './listeners.js';

type Server = Awaited<ReturnType<typeof startUnsealedServer>>;

describe('audit devices created through the API', function () {
  this.timeout(30_000);
  let dir: { path: string; remove: () => Promise<void> };
  let server: Server | undefined;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await dir.remove();
  });

  async function start(options: TestServerOptions): Promise<Server> {
    server = await startUnsealedServer(options);
    return server;
  }

  const enable = (type: string, options: Record<string, string>, at = 'dev'): Promise<TestResponse> =>
    server!.client.post(`sys/audit/${at}`, { type, options });

  /** A 400 whose one error matches `message`, and no device enabled. */
  async function refused(res: TestResponse, message: RegExp): Promise<void> {
    expect(res.status, res.text).to.equal(400);
    expect(res.body.errors[0]).to.match(message);
    expect((await server!.client.get('sys/audit')).body.data).to.deep.equal({});
  }

  it('are refused by default with OpenBao\'s 400, and nothing is opened', async () => {
    await start({});
    const file = path.join(dir.path, 'audit.log');
    const res = await enable('file', { file_path: file });
    expect(res.body.errors).to.deep.equal(['cannot enable audit device via API; use declarative, config-based audit device management instead']);
    await refused(res, /cannot enable audit device via API/);
    expect(await readdir(dir.path)).to.deep.equal([]);
  });

  it('may not set a prefix unless the configuration sets allow_audit_log_prefixing', async () => {
    await start({ audit: API_AUDIT });
    await refused(await enable('file', { file_path: 'discard', prefix: 'process.exit()//' }), /option "prefix": audit log prefixing is not allowed/);
    await refused(await enable('file', { file_path: 'discard', prefix: '' }), /audit log prefixing is not allowed/);
    await server!.close();

    await start({ audit: { ...API_AUDIT, allowAuditLogPrefixing: true } });
    const file = path.join(dir.path, 'prefixed.log');
    expect((await enable('file', { file_path: file, prefix: 'kw ' })).status).to.equal(204);
    await server!.client.get('sys/audit');
    expect(await readFile(file, 'utf8')).to.match(/^kw \{/);
  });

  describe('file_path', () => {
    let plugins: string;
    beforeEach(async () => {
      plugins = path.join(dir.path, 'plugins');
      await mkdir(plugins);
      await mkdir(path.join(dir.path, 'logs'));
      await start({ audit: API_AUDIT, pluginDirectory: plugins });
    });

    it('is refused inside plugin_directory: directly, through "..", through a symbolic link to it, and as a relative path', async () => {
      await symlink(plugins, path.join(dir.path, 'innocent'));
      const attempts = [
        path.join(plugins, 'payload.js'),
        `${dir.path}/logs/../plugins/payload.js`,
        path.join(dir.path, 'innocent', 'payload.js'),
        path.relative(process.cwd(), path.join(plugins, 'payload.js')),
        plugins,
      ];
      for (const attempt of attempts) {
        await refused(await enable('file', { file_path: attempt }), /option "file_path": ".*" is inside plugin_directory; audit files may not be written there/);
      }
      expect(await readdir(plugins), 'nothing was written there').to.deep.equal([]);
      expect((await enable('file', { file_path: path.join(dir.path, 'logs', 'audit.log') })).status).to.equal(204);
    });

    it('is refused through a symbolic link at the file itself, whether it leads to a file or nowhere, and nothing is written through it', async () => {
      const target = path.join(dir.path, 'logs', 'target.log');
      await writeFile(target, 'untouched\n', { mode: 0o600 });
      await symlink(target, path.join(dir.path, 'logs', 'link.log'));
      await symlink(path.join(dir.path, 'logs', 'created-through.log'), path.join(dir.path, 'logs', 'dangling.log'));
      for (const name of ['link.log', 'dangling.log']) {
        await refused(await enable('file', { file_path: path.join(dir.path, 'logs', name) }), /is a symbolic link; an API-created device does not follow one/);
      }
      expect(await readFile(target, 'utf8')).to.equal('untouched\n');
      expect(await readdir(path.join(dir.path, 'logs'))).to.not.include('created-through.log');
    });

    it('is refused when it names a FIFO or a device node', async () => {
      const fifo = path.join(dir.path, 'logs', 'pipe');
      execFileSync('mkfifo', [fifo]);
      // A reader holds the FIFO open, so a server that opened it would get it rather than wait.
      const reader = await open(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
      try {
        await refused(await enable('file', { file_path: fifo }), /"file_path": ".*pipe" is not a regular file/);
      } finally {
        await reader.close();
      }
      await refused(await enable('file', { file_path: '/dev/null' }), /"file_path": "\/dev\/null" is not a regular file/);
    });

    it('may not append to an existing file that is executable or writable by group or others', async () => {
      for (const mode of [0o755, 0o666, 0o620, 0o700]) {
        const file = path.join(dir.path, 'logs', `existing-${octal(mode)}.log`);
        await writeFile(file, '');
        await chmod(file, mode);
        await refused(await enable('file', { file_path: file, mode: '0000' }), /the existing file ".*" is executable or writable by group or others/);
        expect((await stat(file)).mode & 0o7777, octal(mode)).to.equal(mode);
        expect(await readFile(file, 'utf8')).to.equal('');
      }
    });
  });

  it('may not write into the storage directory', async () => {
    const data = path.join(dir.path, 'data');
    await start({ audit: API_AUDIT, leveldbPath: data });
    const before = await readdir(data);
    await refused(await enable('file', { file_path: path.join(data, 'LOCK') }), /"file_path": ".*LOCK" is inside the storage directory/);
    await refused(await enable('file', { file_path: path.join(data, '000001.log') }), /is inside the storage directory/);
    expect(await readdir(data)).to.deep.equal(before);
  });

  describe('mode', () => {
    beforeEach(async () => {
      await start({ audit: API_AUDIT });
    });

    it('refuses executable, setuid, setgid, sticky and group- or world-writable modes, naming the option', async () => {
      for (const mode of ['4777', '0777', '0666', '0755', '0700', '2640', '1644', '0660', '0602']) {
        await refused(await enable('file', { file_path: path.join(dir.path, `m${mode}.log`), mode }), new RegExp(`option "mode": "${mode}" is refused`));
      }
      expect(await readdir(dir.path)).to.deep.equal([]);
    });

    it('creates the file with 0600, 0640, 0644, 0400, 0440 or 0444, as asked', async () => {
      for (const mode of ['0600', '0640', '0644', '0400', '0440', '0444']) {
        const file = path.join(dir.path, `m${mode}.log`);
        expect((await enable('file', { file_path: file, mode }, `m${mode}`)).status, mode).to.equal(204);
        expect(octal((await stat(file)).mode & 0o7777), mode).to.equal(mode);
      }
    });

    it('never widens an existing file: an existing 0600 file asked for 0644 stays 0600; a wider one is narrowed', async () => {
      const narrow = path.join(dir.path, 'narrow.log');
      await writeFile(narrow, '');
      await chmod(narrow, 0o600);
      expect((await enable('file', { file_path: narrow, mode: '0644' }, 'narrow')).status).to.equal(204);
      expect(octal((await stat(narrow)).mode & 0o7777)).to.equal('0600');

      const wide = path.join(dir.path, 'wide.log');
      await writeFile(wide, '');
      await chmod(wide, 0o644);
      expect((await enable('file', { file_path: wide, mode: '0640' }, 'wide')).status).to.equal(204);
      expect(octal((await stat(wide)).mode & 0o7777)).to.equal('0640');

      const kept = path.join(dir.path, 'kept.log');
      await writeFile(kept, '');
      await chmod(kept, 0o444);
      expect((await enable('file', { file_path: kept, mode: '0000' }, 'kept')).status).to.equal(204);
      expect(octal((await stat(kept)).mode & 0o7777)).to.equal('0444');
    });
  });

  describe('socket targets', () => {
    const collectors: Collector[] = [];
    afterEach(async () => {
      await Promise.all(collectors.splice(0).map((c) => c.close()));
    });
    async function collector(listen: Parameters<typeof streamCollector>[0]): Promise<Collector> {
      const started = await streamCollector(listen);
      collectors.push(started);
      return started;
    }

    it('a socket device connects only to an address api_audit_socket_allowlist lists, compared as written', async () => {
      const listed = await collector({ tcp: true });
      const unlisted = await collector({ tcp: true });
      const unixPath = path.join(dir.path, 'collector.sock');
      const unixListed = await collector({ path: unixPath });
      await start({ audit: { ...API_AUDIT, apiAuditSocketAllowlist: [listed.address, unixPath] } });

      const port = listed.address.split(':')[1]!;
      for (const address of [unlisted.address, `localhost:${port}`, `127.1:${port}`, `[::ffff:127.0.0.1]:${port}`]) {
        await refused(await enable('socket', { address }), /option "address": ".*" is not in the configuration's api_audit_socket_allowlist/);
      }
      await refused(await enable('socket', { address: path.join(dir.path, 'other.sock'), socket_type: 'unix' }), /is not in the configuration's api_audit_socket_allowlist/);
      expect(unlisted.connections, 'the unlisted collector was never reached').to.equal(0);

      expect((await enable('socket', { address: listed.address }, 'net')).status).to.equal(204);
      // The same socket, written another way: compared after normalization.
      expect((await enable('socket', { address: path.join(dir.path, 'logs', '..', 'collector.sock'), socket_type: 'unix' }, 'unix')).status).to.equal(204);
      await server!.client.get('sys/audit');
      for (const reached of [listed, unixListed]) await reached.waitFor((lines) => lines.some((l) => l.includes('"path":"sys/audit"')));
    });

    it('are all refused when the allowlist is empty', async () => {
      const live = await collector({ tcp: true });
      await start({ audit: API_AUDIT });
      await refused(await enable('socket', { address: live.address }), /is not in the configuration's api_audit_socket_allowlist/);
      expect(live.connections).to.equal(0);
    });

    it('a syslog device names as socket_path only a standard syslog socket or one the allowlist lists', async () => {
      const offList = path.join(dir.path, 'off-list.sock');
      const offListener = await collector({ path: offList });
      const listedPath = path.join(dir.path, 'listed.sock');
      const listedListener = await collector({ path: listedPath });
      await start({ audit: { ...API_AUDIT, apiAuditSocketAllowlist: [listedPath] } });

      await refused(
        await enable('syslog', { socket_path: offList }),
        /option "socket_path": ".*off-list\.sock" is neither a standard syslog socket \(\/dev\/log, \/var\/run\/syslog, \/var\/run\/log\) nor in the configuration's api_audit_socket_allowlist/,
      );
      expect(offListener.connections).to.equal(0);
      expect((await enable('syslog', { socket_path: listedPath })).status).to.equal(204);
      await server!.client.get('sys/audit');
      await listedListener.waitFor((lines) => lines.some((l) => l.includes('"path":"sys/audit"')));
    });
  });
});
