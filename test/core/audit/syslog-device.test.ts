/**
 * The `syslog` audit device against syslog listeners this test owns (`socket_path`), on a unix
 * stream socket and on a unix datagram socket (what rsyslog and journald bind at `/dev/log`),
 * enabled over HTTP; and the search through the socket paths.
 */
import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { API_AUDIT, startUnsealedServer, tempDir } from '../../helpers/server.js';
import type { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import { connectFirst } from '../../../core/audit/syslog-device.js';
import { stallingUnixDatagramCollector, streamCollector, unixDatagramCollector, type Collector } from './listeners.js';

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
    dir = await tempDir();
    socketPath = path.join(dir.path, 'syslog.sock');
    // The listeners this test starts, as an operator lists the sockets API-created devices may use.
    const listed = ['syslog.sock', 'dev-log', 'busy-log', 'none.sock'].map((name) => path.join(dir.path, name));
    server = await startUnsealedServer({ audit: { ...API_AUDIT, allowAuditLogPrefixing: true, apiAuditSocketAllowlist: listed } });
    collector = await streamCollector({ path: socketPath });
    expect((await server.client.post('sys/mounts/notes', { type: 'notes' })).status).to.equal(204);
  });
  afterEach(async () => {
    await server.close();
    await collector.close();
    await dir.remove();
  });

  /** The parsed syslog messages whose entry is about `notePath`. */
  function messagesFor(notePath: string, from: Collector = collector) {
    return from.lines
      .map((line) => {
        const m = SYSLOG_LINE.exec(line);
        if (!m) throw new Error(`not a syslog message: ${line.slice(0, 120)}`);
        return { pri: Number(m[1]), stamp: m[2]!, tag: m[3]!, pid: Number(m[4]), entry: JSON.parse(m[5]!) as Record<string, any> };
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

  describe('to a unix datagram socket, as the daemon listens on /dev/log', () => {
    let daemon: Collector;
    let daemonPath: string;

    beforeEach(async () => {
      daemonPath = path.join(dir.path, 'dev-log');
      daemon = await unixDatagramCollector(daemonPath);
    });
    afterEach(async () => {
      await daemon.close();
    });

    it('sends each entry as one datagram with the priority, timestamp, tag and pid, hashed like every device', async () => {
      const enabled = await server.client.post('sys/audit/syslog', { type: 'syslog', options: { socket_path: daemonPath, facility: 'LOCAL3', tag: 'kw' } });
      expect(enabled.status, enabled.text).to.equal(204);
      expect((await server.client.post('notes/notes/a', { text: 'said only to the barrier' })).status).to.equal(204);
      await daemon.waitFor(() => messagesFor('notes/notes/a', daemon).length === 2);

      const [request, response] = messagesFor('notes/notes/a', daemon);
      expect(request!.pri).to.equal(19 * 8 + 6);
      expect(request!.tag).to.equal('kw');
      expect(request!.pid).to.equal(process.pid);
      expect([request!.entry.type, response!.entry.type]).to.deep.equal(['request', 'response']);
      const hash = (await server.client.post('sys/audit-hash/syslog', { input: 'said only to the barrier' })).body.data.hash as string;
      expect(request!.entry.request.data.text).to.equal(hash);
      expect(daemon.lines.join('\n')).not.to.contain('said only to the barrier');
      expect(collector.lines, 'nothing went to the stream listener').to.deep.equal([]);
    });

    it('refuses requests (503, nothing stored) while the daemon is gone, and reaches it again once it is back', async () => {
      expect((await server.client.post('sys/audit/syslog', { type: 'syslog', options: { socket_path: daemonPath } })).status).to.equal(204);
      expect((await server.client.post('notes/notes/c', { text: 'x' })).status).to.equal(204);
      await daemon.waitFor(() => messagesFor('notes/notes/c', daemon).length === 2);

      // Died, its socket file left behind: the connected socket and a new one are both refused.
      await daemon.close();
      const refused = await server.client.post('notes/notes/d', { text: 'x' });
      expect(refused.status, refused.text).to.equal(503);

      daemon = await unixDatagramCollector(daemonPath);
      expect((await server.client.post('notes/notes/e', { text: 'x' })).status).to.equal(204);
      await daemon.waitFor(() => messagesFor('notes/notes/e', daemon).length === 2);
      expect((await server.client.get('notes/notes/d')).status).to.equal(404);
      // Only the read just made (its request and response): the refused write reached no daemon.
      await daemon.waitFor(() => messagesFor('notes/notes/d', daemon).length === 2);
      expect(messagesFor('notes/notes/d', daemon).map((m) => m.entry.request.operation)).to.deep.equal(['read', 'read']);
    });

    it("holds entries while a busy daemon's queue is full and sends them once it reads again, none lost", async () => {
      const busyPath = path.join(dir.path, 'busy-log');
      const busy = await stallingUnixDatagramCollector(busyPath, 700);
      try {
        expect((await server.client.post('sys/audit/syslog', { type: 'syslog', options: { socket_path: busyPath } })).status).to.equal(204);
        const writes = await Promise.all(Array.from({ length: 30 }, (_, i) => server.client.post(`notes/notes/n${i}`, { text: 'x' })));
        expect(writes.map((w) => w.status)).to.deep.equal(writes.map(() => 204));
        for (let i = 0; i < 30; i++) await busy.waitFor(() => messagesFor(`notes/notes/n${i}`, busy).length === 2);
      } finally {
        await busy.close();
      }
    });
  });

  describe('finding the daemon', () => {
    it('prefers a datagram socket to a stream socket, as Go\'s log/syslog does', async () => {
      const daemonPath = path.join(dir.path, 'dev-log');
      const daemon = await unixDatagramCollector(daemonPath);
      try {
        const connection = await connectFirst([socketPath, daemonPath], new AbortController().signal);
        try {
          await connection.send([Buffer.from('<14>hello\n')]);
          await daemon.waitFor((lines) => lines.includes('<14>hello'));
          expect(collector.connections).to.equal(0);
        } finally {
          connection.close();
        }
      } finally {
        await daemon.close();
      }
    });


    it('connects to the first path that accepts a stream connection, skipping missing ones and non-sockets', async () => {
      const missing = path.join(dir.path, 'missing.sock');
      const notASocket = path.join(dir.path, 'plain-file');
      await writeFile(notASocket, '');
      const aDirectory = path.join(dir.path, 'a-directory');
      await mkdir(aDirectory);
      const connection = await connectFirst([missing, notASocket, aDirectory, socketPath], new AbortController().signal);
      try {
        await connection.send([Buffer.from('<14>hello\n')]);
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

    it('refuses a path too long for a unix socket address instead of connecting to a shortened one', async () => {
      // Its first 107 bytes name a listening datagram socket; the whole path names nothing.
      const daemonPath = path.join(dir.path, 'd'.repeat(107 - dir.path.length - 1));
      const daemon = await unixDatagramCollector(daemonPath);
      try {
        const tooLong = `${daemonPath}-and-more`;
        const err = await connectFirst([tooLong], new AbortController().signal).then(
          () => expect.fail('connected'),
          (e: Error) => e,
        );
        expect(err.message).to.match(/: datagram ENAMETOOLONG, stream E[A-Z]+$/);
      } finally {
        await daemon.close();
      }
    });
  });
});
