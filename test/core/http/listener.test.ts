/** The TCP/TLS listener on its own: draining on shutdown, certificate reload, the TLS floor. */
import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import Koa from 'koa';
import { listen, type Listener } from '../../../core/http/listener.js';
import { tempDir } from '../../helpers/server.js';
import { createTestCa, tlsRequest, type TestCa } from '../../helpers/tls.js';

/** An app whose `/slow` requests wait until released; every other path answers at once. */
function slowApp(): { app: Koa; entered: Promise<void>; release: () => void } {
  let release!: () => void;
  let entered!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const enteredPromise = new Promise<void>((resolve) => (entered = resolve));
  const app = new Koa();
  // The answer of a request whose connection drain cut is written to a closed stream: expected here.
  app.on('error', () => undefined);
  app.use(async (ctx) => {
    if (ctx.path === '/slow') {
      entered();
      await released;
    }
    ctx.body = 'done';
  });
  return { app, entered: enteredPromise, release };
}

function get(port: number, agent: http.Agent | false): Promise<{ status: number; connection: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/slow', agent }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

function connectError(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code));
  });
}

describe('listener', function () {
  this.timeout(20_000);

  describe('drain', () => {
    it('refuses new connections, lets the request in flight finish, and closes its keep-alive connection after the response', async () => {
      const { app, entered, release } = slowApp();
      const listener = await listen(app, { host: '127.0.0.1', port: 0 });
      const agent = new http.Agent({ keepAlive: true });
      try {
        const answer = get(listener.port, agent);
        await entered;
        const drained = listener.drain(5_000);
        expect(await connectError(listener.port)).to.equal('ECONNREFUSED');
        release();
        expect(await answer).to.deep.equal({ status: 200, connection: 'close', text: 'done' });
        expect(await drained).to.equal(0);
      } finally {
        agent.destroy();
      }
    });

    it('cuts the connections still busy at the timeout and says how many', async () => {
      const { app, entered, release } = slowApp();
      const listener = await listen(app, { host: '127.0.0.1', port: 0 });
      const answer = get(listener.port, false).then(
        () => 'answered',
        (err: NodeJS.ErrnoException) => err.code,
      );
      await entered;
      const started = Date.now();
      expect(await listener.drain(300)).to.equal(1);
      expect(Date.now() - started).to.be.within(250, 3_000);
      expect(await answer).to.equal('ECONNRESET');
      release();
    });
  });

  describe('idle and write timeouts', () => {
    /** A raw keep-alive connection that has had one request answered. */
    async function servedConnection(port: number): Promise<{ socket: net.Socket; closed: Promise<void> }> {
      const socket = net.connect(port, '127.0.0.1');
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.on('error', () => undefined);
      const answered = new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
      socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await answered).to.match(/^HTTP\/1\.1 200 /);
      return { socket, closed };
    }

    it('closes a keep-alive connection that waits longer than http_idle_timeout for its next request, and only that one', async () => {
      const { app } = slowApp();
      const short = await listen(app, { host: '127.0.0.1', port: 0, idleTimeoutMs: 200 });
      const usual = await listen(app, { host: '127.0.0.1', port: 0 });
      const kept = await servedConnection(usual.port);
      try {
        const idle = await servedConnection(short.port);
        await idle.closed;
        expect(kept.socket.destroyed, 'a connection under the default idle timeout (5 min) stays open').to.equal(false);
        const again = new Promise<string>((resolve) => kept.socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
        kept.socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
        expect(await again).to.match(/^HTTP\/1\.1 200 /);
      } finally {
        kept.socket.destroy();
        await short.close();
        await usual.close();
      }
    });

    it('cuts the connection of a response not written within http_write_timeout, and leaves quick ones alone', async () => {
      const { app, entered, release } = slowApp();
      const listener = await listen(app, { host: '127.0.0.1', port: 0, writeTimeoutMs: 300 });
      try {
        const quick = await servedConnection(listener.port);
        quick.socket.destroy();
        const answer = get(listener.port, false).then(
          () => 'answered',
          (err: NodeJS.ErrnoException) => err.code,
        );
        await entered;
        expect(await answer).to.equal('ECONNRESET');
      } finally {
        release();
        await listener.close();
      }
    });
  });

  describe('TLS', () => {
    let dir: { path: string; remove: () => Promise<void> };
    let ca: TestCa;
    let listener: Listener | undefined;
    const file = (name: string) => path.join(dir.path, name);

    before(() => {
      ca = createTestCa('listener test CA');
    });

    beforeEach(async () => {
      dir = await tempDir();
      const first = ca.issue({ commonName: 'first', usage: 'server', serial: '0a' });
      await writeFile(file('cert.pem'), first.certPem);
      await writeFile(file('key.pem'), first.keyPem);
    });

    afterEach(async () => {
      await listener?.close();
      listener = undefined;
      await dir.remove();
    });

    it('reloadTls serves the new certificate to new connections, and keeps the old one when the new key does not match', async () => {
      listener = await listen(slowApp().app, { host: '127.0.0.1', port: 0, tlsCertFile: file('cert.pem'), tlsKeyFile: file('key.pem') });
      expect((await tlsRequest(listener.address, '/', { ca: ca.certPem })).serverSerial).to.equal('0A');
      const second = ca.issue({ commonName: 'second', usage: 'server', serial: '0b' });
      await writeFile(file('cert.pem'), second.certPem);
      await writeFile(file('key.pem'), second.keyPem);
      listener.reloadTls();
      expect((await tlsRequest(listener.address, '/', { ca: ca.certPem })).serverSerial).to.equal('0B');

      const third = ca.issue({ commonName: 'third', usage: 'server', serial: '0c' });
      await writeFile(file('cert.pem'), third.certPem);
      expect(() => listener!.reloadTls()).to.throw(/key values mismatch/);
      expect((await tlsRequest(listener.address, '/', { ca: ca.certPem })).serverSerial).to.equal('0B');
    });

    it('refuses a client that speaks at most TLS 1.2 when tlsMinVersion is TLSv1.3', async () => {
      listener = await listen(slowApp().app, {
        host: '127.0.0.1',
        port: 0,
        tlsCertFile: file('cert.pem'),
        tlsKeyFile: file('key.pem'),
        tlsMinVersion: 'TLSv1.3',
      });
      expect((await tlsRequest(listener.address, '/', { ca: ca.certPem, maxVersion: 'TLSv1.3' })).status).to.equal(200);
      const refused = await tlsRequest(listener.address, '/', { ca: ca.certPem, maxVersion: 'TLSv1.2' }).catch((err: Error) => err);
      expect(refused).to.be.instanceOf(Error);
      expect((refused as Error).message).to.match(/protocol version|alert/i);
    });
  });
});
