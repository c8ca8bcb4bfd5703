/** Requests refused for their token are audited, request and error, with the token HMACed. */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { API_AUDIT, startUnsealedServer, tempDir } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';

describe('authentication stage', function () {
  this.timeout(20_000);

  it('audits a request with an invalid token: the request and a permission-denied response, the token only as its HMAC', async () => {
    const dir = await tempDir();
    const server = await startUnsealedServer({ audit: API_AUDIT });
    try {
      const file = path.join(dir.path, 'audit.log');
      expect((await server.client.put('sys/audit/file', { type: 'file', options: { file_path: file } })).status).to.equal(204);
      await server.client.post('sys/mounts/transit', { type: 'transit' });
      const guess = 'hvs.guessed-token-0123456789';
      const res = await new TestClient(server.address, guess).post('transit/encrypt/k', { plaintext: 'c2VjcmV0' });
      expect(res.status).to.equal(403);
      const anonymous = await new TestClient(server.address).get('transit/keys/k');
      expect(anonymous.status).to.equal(403);

      const log = await readFile(file, 'utf8');
      expect(log).not.to.contain(guess);
      const lines = log.trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);  
      const hash = (await server.client.post('sys/audit-hash/file', { input: guess })).body.data.hash as string;
      const denied = await server.client.post('sys/audit-hash/file', { input: 'permission denied' });
      const forGuess = lines.filter((l) => l.request?.path === 'transit/encrypt/k');
      expect(forGuess.map((l) => l.type)).to.deep.equal(['request', 'response']);
      expect(forGuess[0]!.request.client_token).to.equal(hash);
      expect(forGuess[1]!.error).to.equal(denied.body.data.hash);
      const forAnonymous = lines.filter((l) => l.request?.path === 'transit/keys/k');
      expect(forAnonymous.map((l) => l.type)).to.deep.equal(['request', 'response']);
    } finally {
      await server.close();
      await dir.remove();
    }
  });

  it('audits a request refused for its token on a sys path too', async () => {
    const dir = await tempDir();
    const server = await startUnsealedServer({ audit: API_AUDIT });
    try {
      const file = path.join(dir.path, 'audit.log');
      await server.client.put('sys/audit/file', { type: 'file', options: { file_path: file } });
      const before = (await readFile(file, 'utf8')).length;
      const res = await new TestClient(server.address, 'not-a-token').get('sys/mounts');
      expect(res.status).to.equal(403);
      expect((await readFile(file, 'utf8')).length).to.be.greaterThan(before);
    } finally {
      await server.close();
      await dir.remove();
    }
  });
});
