/**
 * The `syslog` audit device against a syslog listener on a unix stream socket this test owns
 * (`socket_path`), enabled over HTTP; and the search through the default socket paths.
 */
import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startUnsealedServer, tempDir } from '../../helpers/server.js';
import type { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import { connectFirst } from '../../../core/audit/syslog-device.js';
import { streamCollector, type Collector } from './listeners.js';

type Server = RunningServer & { client: TestClient; rootToken: string };

/** `<PRI>Mmm dd hh:mm:ss TAG[PID]: JSON`, as Go's log/syslog writes to a local daemon. */
const SYSLOG_LINE = /^<(\d+)>([A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) ([^ \[]+)\[(\d+)\]: (\{.*\})$/;

describe('syslog audit device', function () {
  this.timeout(30_000);
  let server: Server;
  let dir: { path: string; remove: () => Promise<void> };
  let collector: Collector;
  let socketPath: string;

  beforeEach(async () => {
    server = await startUnsealedServer();
    dir = await tempDir();
    socketPath = path.join(dir.path, 'syslog.sock');
    collector = await streamCollector({ path: socketPath });
    expect((await server.client.post('sys/mounts/notes', { type: 'notes' })).status).to.equal(204);
  });
  afterEach(async () => {
    await server.close();
    await collector.close();
    await dir.remove();
  });

  /** The parsed syslog messages whose entry is about `notePath`. */
  function messagesFor(notePath: string) {
    return collector.lines
      .map((line) => {
        const m = SYSLOG_LINE.exec(line);
        if (!m) throw new Error(`not a syslog message: ${line.slice(0, 120)}`);
        return { pri: Number(m[1]), stamp: m[2]!, tag: m[3]!, pid: Number(m[4]), entry: JSON.parse(m[5]!) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
      })
      .filter((m) => m.entry.request?.path === notePath);
  }

  it('sends each entry as one message with facility AUTH, severity INFO, tag keywarden and the server pid by default', async () => {
    const enabled = await server.client.post('sys/audit/syslog', { type: 'syslog', options: { socket_path: socketPath } });
    expect(enabled.status, enabled.text).to.equal(204);
    expect((await server.client.post('notes/notes/a', { text: 'in the clear nowhere' })).status).to.equal(204);
    await collector.waitFor(() => messagesFor('notes/notes/a').length === 2);

    const [request, response] = messagesFor('notes/notes/a');
    expect(request!.pri).to.equal(4 * 8 + 6);
    expect(request!.tag).to.equal('keywarden');
    expect(request!.pid).to.equal(process.pid);
    expect(request!.entry.type).to.equal('request');
    expect(response!.entry.type).to.equal('response');
    const hash = (await server.client.post('sys/audit-hash/syslog', { input: 'in the clear nowhere' })).body.data.hash as string;
    expect(request!.entry.request.data.text).to.equal(hash);
    expect(collector.lines.join('\n')).not.to.contain('in the clear nowhere');
  });

  it('honours facility (any case), tag and prefix', async () => {
    const enabled = await server.client.post('sys/audit/syslog', {
      type: 'syslog',
      options: { socket_path: socketPath, facility: 'local0', tag: 'kw-audit', prefix: 'AUDIT ' },
    });
    expect(enabled.status, enabled.text).to.equal(204);
    expect((await server.client.post('notes/notes/b', { text: 'x' })).status).to.equal(204);
    await collector.waitFor(() => collector.lines.some((l) => l.includes('"notes/notes/b"')));
    const line = collector.lines.find((l) => l.includes('"notes/notes/b"'))!;
    expect(line).to.match(/^<134>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d kw-audit\[\d+\]: AUDIT \{/);
  });

  it('reconnects after the daemon restarts, and refuses requests (503) while it is down', async () => {
    expect((await server.client.post('sys/audit/syslog', { type: 'syslog', options: { socket_path: socketPath } })).status).to.equal(204);
    expect((await server.client.post('notes/notes/c', { text: 'x' })).status).to.equal(204);
    await collector.close();
    expect((await server.client.post('notes/notes/d', { text: 'x' })).status).to.equal(503);

    collector = await streamCollector({ path: socketPath });
    expect((await server.client.post('notes/notes/e', { text: 'x' })).status).to.equal(204);
    await collector.waitFor(() => messagesFor('notes/notes/e').length === 2);
    expect((await server.client.get('notes/notes/d')).status).to.equal(404);
  });

  it('refuses bad options with a 400 naming the option, and a socket path nobody listens on naming it', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ socket_path: socketPath, facility: 'KERNEL' }, /option "facility": "KERNEL" is not one of KERN, USER/],
      [{ socket_path: socketPath, tag: 'two words' }, /option "tag": "two words" must be 1 to 48 printable characters/],
      [{ socket_path: socketPath, address: '127.0.0.1:514' }, /unknown audit device option\(s\) "address"/],
      [{ socket_path: path.join(dir.path, 'none.sock') }, /cannot connect to the syslog socket: .*none\.sock: ENOENT/],
    ];
    for (const [options, message] of cases) {
      const res = await server.client.post('sys/audit/syslog', { type: 'syslog', options });
      expect(res.status, JSON.stringify(options)).to.equal(400);
      expect(res.body.errors[0], JSON.stringify(options)).to.match(message);
    }
  });

  describe('finding the daemon', () => {
    it('connects to the first path that accepts a stream connection, skipping missing ones and non-sockets', async () => {
      const missing = path.join(dir.path, 'missing.sock');
      const notASocket = path.join(dir.path, 'plain-file');
      await writeFile(notASocket, '');
      const aDirectory = path.join(dir.path, 'a-directory');
      await mkdir(aDirectory);
      const connection = await connectFirst([missing, notASocket, aDirectory, socketPath], new AbortController().signal);
      try {
        await connection.send(Buffer.from('<14>hello\n'));
        await collector.waitFor((lines) => lines.includes('<14>hello'));
      } finally {
        connection.close();
      }
    });

    it('names every path it tried and why each failed', async () => {
      const missing = path.join(dir.path, 'missing.sock');
      const notASocket = path.join(dir.path, 'plain-file');
      await writeFile(notASocket, '');
      const err = await connectFirst([missing, notASocket], new AbortController().signal).then(
        () => expect.fail('connected'),
        (e: Error) => e,
      );
      expect(err.message).to.equal(`${missing}: ENOENT; ${notASocket}: ECONNREFUSED`);
    });
  });
});
