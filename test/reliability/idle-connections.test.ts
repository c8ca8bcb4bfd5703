/**
 * Idle keep-alive connections (the in-`npm test` size of bench/idle-connections.bench.ts): the
 * server answers `sys/health` at once while hundreds of connections sit idle after a request, and
 * closes each of them once `http_idle_timeout` has passed, so idle clients cannot pile up.
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../core/config/config.js';
import { startServer } from '../../core/server.js';
import { tempDir } from '../helpers/server.js';
import { request } from '../helpers/http.js';
import { turnsDuring } from '../helpers/event-loop.js';

const IDLE = 300;

/** A connection that made one request, read its answer, and stays open doing nothing. */
function idleConnection(port: number): Promise<{ socket: net.Socket; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.once('error', reject);
    socket.once('data', (chunk: Buffer) => {
      if (!chunk.toString().startsWith('HTTP/1.1 ')) reject(new Error(chunk.toString()));
      socket.on('error', () => undefined);
      resolve({ socket, closed });
    });
    socket.write('GET /v1/sys/health HTTP/1.1\r\nHost: idle\r\n\r\n');
  });
}

describe('idle keep-alive connections', function () {
  this.timeout(60_000);

  it(`answers sys/health at once while ${IDLE} connections sit idle, and closes every one of them after http_idle_timeout`, async () => {
    const dir = await tempDir('keywarden-idle-');
    const file = path.join(dir.path, 'keywarden.json');
    await writeFile(file, JSON.stringify({ listener: { tcp: { address: '127.0.0.1:0', tls_disable: true, http_idle_timeout: '3s' } }, storage: { inmem: {} } }));
    const server = await startServer({ config: loadConfig(file), plugins: [], logger: pino({ level: 'silent' }) });
    const idle: Array<{ socket: net.Socket; closed: Promise<void> }> = [];
    try {
      const port = Number(new URL(server.address).port);
      for (let i = 0; i < IDLE; i += 50) idle.push(...(await Promise.all(Array.from({ length: 50 }, () => idleConnection(port)))));
      expect(idle.filter((c) => !c.socket.destroyed).length, 'open idle connections').to.equal(IDLE);
      // Answered without the idle connections costing it work: a handful of event-loop turns.
      const { result, turns } = await turnsDuring(() => request(server.address, 'GET', '/v1/sys/health'));
      expect(result.status).to.equal(501);
      expect(turns, 'event-loop turns for one health check').to.be.below(50);
      await Promise.all(idle.map((c) => c.closed));
      expect(idle.every((c) => c.socket.destroyed), 'every idle connection closed by the server').to.equal(true);
    } finally {
      for (const c of idle) c.socket.destroy();
      await server.close();
      await dir.remove();
    }
  });
});
