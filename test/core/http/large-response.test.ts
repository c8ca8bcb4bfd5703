/**
 * A large response over a real listener: its JSON is made in pieces, with turns of the event loop
 * before its first byte is sent (other clients are served meanwhile), and it arrives whole.
 */
import { expect } from 'chai';
import http from 'node:http';
import { startUnsealedServer } from '../../helpers/server.js';
import { turnsDuring } from '../../helpers/event-loop.js';
import type { RunningServer } from '../../../core/server.js';
import type { TestClient } from '../../helpers/http.js';

/** Sends a GET and resolves with the response as soon as its headers are in. */
function responseHeaders(server: RunningServer & { rootToken: string }, path: string): Promise<http.IncomingMessage> {
  const base = new URL(server.address);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, path: `/v1/${path}`, headers: { 'X-Vault-Token': server.rootToken }, agent: false }, resolve);
    req.on('error', reject);
    req.end();
  });
}

async function bodyOf(res: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('large responses', function () {
  this.timeout(60_000);
  let server: RunningServer & { client: TestClient; rootToken: string };

  before(async () => {
    // The listener takes the 16 MB string the answer is made of (max_json_string_value_length).
    server = await startUnsealedServer({ jsonLimits: { stringLength: 32 * 1024 * 1024 } });
    expect((await server.client.post('sys/mounts/notes', { type: 'notes' })).status).to.equal(204);
  });
  after(() => server.close());

  it('a 16 MB answer is serialised with turns of the event loop before its first byte, and arrives whole with its Content-Length', async () => {
    const text = 'n'.repeat(16 * 1024 * 1024);
    expect((await server.client.post('notes/notes/big', { text })).status).to.equal(204);

    const { result: res, turns } = await turnsDuring(() => responseHeaders(server, 'notes/notes/big'));
    expect(turns).to.be.at.least(10);
    const body = await bodyOf(res);
    expect(res.statusCode).to.equal(200);
    expect(res.headers['content-type']).to.equal('application/json');
    expect(Number(res.headers['content-length'])).to.equal(body.length);
    expect(JSON.parse(body.toString('utf8')).data.text).to.equal(text);
  });
});
