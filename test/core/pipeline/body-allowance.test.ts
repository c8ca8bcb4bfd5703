/**
 * What a request without a token can make the server do is bounded by its head: a path that
 * needs a token is refused without its body being read; a path that needs none (login, init,
 * unseal) takes at most max_unauthenticated_request_size. A 20 MB body without a token once
 * stalled every client for tens of seconds while it was parsed and HMAC'd for the audit log.
 */
import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { API_AUDIT, startUnsealedServer, startTestServer, tempDir } from '../../helpers/server.js';
import { createToken } from '../../helpers/http.js';
import greeterPlugin from '../../fixtures/plugins/greeter-auth.js';
import notesPlugin from '../../fixtures/plugins/notes.js';

interface Upload {
  readonly status: number;
  readonly text: string;
  /** Body bytes handed to the socket before the answer came back. */
  readonly sent: number;
}

/**
 * POSTs a `size`-byte JSON body, `{"a":["x","x",…]}` (the shape that once stalled the server), in
 * 256 KiB writes, each after the previous one drained, and stops writing once the answer arrives:
 * a server that answers without reading the body gets only the first writes.
 */
function upload(base: string, urlPath: string, size: number, headers: Record<string, string> = {}): Promise<Upload> {
  const url = new URL(base);
  const items = Buffer.from('"x",'.repeat(64 * 1024));
  const head = Buffer.from('{"a":[');
  // The last item, then spaces to make the size exact, then the closing brackets.
  const tail = Buffer.from('"x"]}');
  const itemsEnd = head.length + Math.floor((size - head.length - tail.length) / 4) * 4;
  const body = (at: number, length: number): Buffer => {
    const out = Buffer.alloc(length);
    for (let i = 0; i < length; i++) {
      const p = at + i;
      if (p < head.length) out[i] = head[p]!;
      else if (p < itemsEnd) out[i] = items[(p - head.length) % items.length]!;
      else if (p < size - tail.length) out[i] = 0x20;
      else out[i] = tail[p - (size - tail.length)]!;
    }
    return out;
  };
  return new Promise((resolve, reject) => {
    let answered = false;
    let sent = 0;
    const req = http.request(
      { host: url.hostname, port: url.port, path: `/v1/${urlPath}`, method: 'POST', agent: false, headers: { 'Content-Type': 'application/json', 'Content-Length': String(size), ...headers } },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), sent });
          req.destroy();
        });
      },
    );
    // The server may close the connection while bytes are still going out.
    req.on('error', (err) => (answered ? undefined : reject(err)));
    const next = (): void => {
      while (sent < size && !answered && !req.destroyed) {
        const part = body(sent, Math.min(256 * 1024, size - sent));
        sent += part.length;
        if (sent === size) req.end(part);
        else if (!req.write(part)) return void req.once('drain', next);
      }
    };
    next();
  });
}

describe('body allowance: the work a request without a token can cause is bounded', function () {
  this.timeout(60_000);
  const MB = 1024 * 1024;

  describe('with a file audit device on', () => {
    let server: Awaited<ReturnType<typeof startUnsealedServer>>;
    let dir: Awaited<ReturnType<typeof tempDir>>;
    let auditFile: string;
    before(async () => {
      dir = await tempDir();
      // The listener takes strings of megabytes (max_json_string_value_length): the large body below is one.
      server = await startUnsealedServer({ plugins: [notesPlugin, greeterPlugin], audit: API_AUDIT, jsonLimits: { stringLength: 32 * MB } });
      auditFile = path.join(dir.path, 'audit.log');
      await server.host.audit.enable('file', { type: 'file', options: { file_path: auditFile } });
      await server.client.post('sys/mounts/notes', { type: 'notes' });
      await server.client.post('sys/auth/greeter', { type: 'greeter' });
    });
    after(async () => {
      await server.close();
      await dir.remove();
    });

    for (const [why, headers] of [
      ['no token', {}],
      ['an unknown token', { 'X-Vault-Token': 'hvs.not-a-token-of-this-server' }],
    ] as const) {
      it(`answers a 20 MB body with ${why} 403 before reading it, and audits the refusal without it`, async () => {
        const res = await upload(server.address, 'notes/notes/x', 20 * MB, headers);
        expect(res.status, res.text).to.equal(403);
        // Answered while the client was still sending: the server read (at most) the first pieces.
        expect(res.sent).to.be.below(20 * MB);
        const health = await server.client.get('sys/health');
        expect(health.status).to.equal(200);
        const lines = (await readFile(auditFile, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
        const refused = lines.filter((l) => l.request?.path === 'notes/notes/x');
        expect(refused.map((l) => l.type)).to.include.members(['request', 'response']);
        expect(refused.every((l) => l.request.data === undefined)).to.equal(true);
      });
    }

    it('refuses a body over max_unauthenticated_request_size to a path that needs no token, naming the setting', async () => {
      const res = await upload(server.address, 'auth/greeter/login', 20 * MB);
      expect(res.status).to.equal(413);
      expect(res.text).to.contain('max_unauthenticated_request_size');
      expect(res.sent).to.be.below(20 * MB);
    });

    it('reads a large body of a request whose token is usable', async () => {
      const token = await createToken(server.client, { policies: ['default'] });
      const text = 'x'.repeat(3 * MB);
      const res = await server.client.post('sys/wrapping/wrap', { text }, { token, headers: { 'X-Vault-Wrap-TTL': '1m' } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.wrap_info.token).to.be.a('string');
    });

    it('takes a small body to a login', async () => {
      const res = await server.client.send('POST', 'auth/greeter/login', { body: { user: 'ann' }, token: '' });
      expect(res.status, res.text).to.equal(200);
    });
  });

  it('refuses a 28 MB sys/init body by its size before reading it, sealed or not', async () => {
    const server = await startTestServer();
    try {
      const res = await upload(server.address, 'sys/init', 28 * MB);
      expect(res.status).to.equal(413);
      expect(res.sent).to.be.below(28 * MB);
      expect((await server.client.get('sys/init')).body.initialized).to.equal(false);
    } finally {
      await server.close();
    }
  });

  it('stops reading a refused upload once its answer is out, and closes the connection', async () => {
    const server = await startTestServer();
    try {
      const url = new URL(server.address);
      const piece = Buffer.alloc(64 * 1024, 0x20);
      // Written after the 413 arrived, by a client that ignores the server's half-close: a server
      // that drained the body would take all of it.
      const after = 48 * MB;
      const result = await new Promise<{ answer: string; sentAfter: number }>((resolve, reject) => {
        let answer = '';
        let sentAfter = 0;
        const socket = net.connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true });
        const more = (): void => {
          while (sentAfter < after && !socket.destroyed) {
            sentAfter += piece.length;
            if (!socket.write(piece)) return void socket.once('drain', more);
          }
        };
        socket.on('data', (chunk: Buffer) => {
          const first = answer === '';
          answer += chunk.toString('latin1');
          if (first) more();
        });
        socket.on('close', () => resolve({ answer, sentAfter }));
        socket.on('error', () => undefined);
        setTimeout(() => reject(new Error('the connection was never closed')), 20_000).unref();
        socket.write(`PUT /v1/sys/init HTTP/1.1\r\nHost: x\r\nContent-Length: ${64 * MB}\r\n\r\n`);
        socket.write(piece);
      });
      expect(result.answer).to.match(/^HTTP\/1\.1 413 /);
      // What the kernel's buffers take, far short of the rest of the body.
      expect(result.sentAfter).to.be.below(after);
    } finally {
      await server.close();
    }
  });
});
