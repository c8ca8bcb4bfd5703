/**
 * The audit log of a real request mix: every request and response recorded, and no token or
 * plaintext readable in it — only HMACs that sys/audit-hash reproduces.
 */
import { expect } from 'chai';
import { chmod, readFile } from 'node:fs/promises';
import path from 'node:path';
import { API_AUDIT, startUnsealedServer, tempDir } from '../helpers/server.js';
import { TestClient } from '../helpers/http.js';
import notesPlugin from '../fixtures/plugins/notes.js';
import greeterPlugin from '../fixtures/plugins/greeter-auth.js';

describe('audit log', function () {
  this.timeout(30_000);

  it('records a request mix with no raw token or plaintext, only HMACs matching sys/audit-hash', async () => {
    const dir = await tempDir();
    const server = await startUnsealedServer({ plugins: [notesPlugin, greeterPlugin], audit: API_AUDIT });
    try {
      const root = server.client;
      const file = path.join(dir.path, 'audit.log');
      expect((await root.put('sys/audit/file', { type: 'file', options: { file_path: file } })).status).to.equal(204);
      const listed = await root.get('sys/audit');
      expect(listed.body.data['file/']).to.include({ type: 'file' });

      const secret = 'the-launch-code-4242';
      await root.post('sys/mounts/notes', { type: 'notes' });
      await root.post('sys/auth/greeter', { type: 'greeter' });
      await root.put('sys/policy/reader', { policy: 'path "notes/*" { capabilities = ["read"] }' });
      await root.post('notes/notes/launch', { text: secret });
      const child = (await root.post('auth/token/create', { policies: ['reader'] })).body.auth.client_token as string;
      const childClient = new TestClient(server.address, child);
      expect((await childClient.get('notes/notes/launch')).body.data.text).to.equal(secret);
      expect((await childClient.post('notes/notes/forbidden', { text: secret })).status).to.equal(403);
      const login = await new TestClient(server.address).post('auth/greeter/login', { user: 'frank', policies: 'reader' });
      const loginToken = login.body.auth.client_token as string;

      const log = await readFile(file, 'utf8');
      const lines = log.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);  
      expect(lines.length).to.be.greaterThan(10);
      expect(lines.every((l) => l.type === 'request' || l.type === 'response')).to.equal(true);
      for (const raw of [server.rootToken, child, loginToken, secret]) {
        expect(log.includes(raw), `raw value ${raw.slice(0, 8)}… in the audit log`).to.equal(false);
      }
      const hashOf = async (input: string) => (await root.post('sys/audit-hash/file', { input })).body.data.hash as string;
      const secretHash = await hashOf(secret);
      expect(secretHash).to.match(/^hmac-sha256:[0-9a-f]{64}$/);
      expect(log).to.contain(secretHash);
      expect(log).to.contain(await hashOf(server.rootToken));
      expect(log).to.contain(await hashOf(child));
      expect(log).to.contain(await hashOf(loginToken));
      const denied = lines.find((l) => l.type === 'response' && l.request?.path === 'notes/notes/forbidden');
      expect(denied?.error).to.equal(await hashOf('permission denied'));
    } finally {
      await server.close();
      await dir.remove();
    }
  });

  it('refuses requests when the only audit device cannot write, and does nothing unaudited', async () => {
    const dir = await tempDir();
    const server = await startUnsealedServer({ audit: API_AUDIT });
    try {
      const root = server.client;
      await root.post('sys/mounts/notes', { type: 'notes' });
      const logDir = path.join(dir.path, 'logs');
      const { mkdir } = await import('node:fs/promises');
      await mkdir(logDir);
      expect((await root.put('sys/audit/file', { type: 'file', options: { file_path: path.join(logDir, 'audit.log') } })).status).to.equal(204);
      await chmod(logDir, 0o500);
      await chmod(path.join(logDir, 'audit.log'), 0o400);
      if (process.getuid?.() === 0) {
        // Root ignores file modes; make the device fail by replacing the file with a directory instead.
        const { rm } = await import('node:fs/promises');
        await chmod(logDir, 0o700);
        await rm(path.join(logDir, 'audit.log'));
        await mkdir(path.join(logDir, 'audit.log'));
        await server.host.audit.reopen();
      }
      const res = await root.post('notes/notes/should-not-exist', { text: 'x' });
      expect(res.status).to.equal(503);
      expect(res.body.errors).to.deep.equal(['no audit device could record the request']);
      // Repair the device: requests are audited again, and the refused write never happened.
      const { rm } = await import('node:fs/promises');
      await chmod(logDir, 0o700);
      await rm(path.join(logDir, 'audit.log'), { recursive: true, force: true });
      await server.host.audit.reopen();
      expect((await root.get('notes/notes/should-not-exist')).status).to.equal(404);
    } finally {
      await server.close();
      await dir.remove();
    }
  });

  it('records a batch answer as data (each ciphertext an HMAC) while the client gets the ciphertexts', async () => {
    const dir = await tempDir();
    const server = await startUnsealedServer({ plugins: [], audit: API_AUDIT });
    try {
      const root = server.client;
      const file = path.join(dir.path, 'audit.log');
      await root.put('sys/audit/file', { type: 'file', options: { file_path: file } });
      await root.post('sys/mounts/transit', { type: 'transit' });
      await root.post('transit/keys/orders', {});
      const plaintexts = ['order 1', 'order 2'].map((p) => Buffer.from(p).toString('base64'));
      const res = await root.post('transit/encrypt/orders', {
        batch_input: [{ plaintext: plaintexts[0], reference: 'first' }, { plaintext: plaintexts[1] }, { plaintext: 'not base64!' }],
        partial_failure_response_code: 207,
      });
      expect(res.status).to.equal(207);
      const answered = res.body.data.batch_results as Array<Record<string, unknown>>;
      expect(answered.map((r) => r.reference)).to.deep.equal(['first', '', '']);
      expect(answered[2]!.error).to.be.a('string');

      const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);  
      const entry = lines.find((l) => l.type === 'response' && l.request?.path === 'transit/encrypt/orders');
      const recorded = entry?.response?.data?.batch_results as Array<Record<string, unknown>>;
      expect(recorded).to.have.length(3);
      const hashOf = async (input: string) => (await root.post('sys/audit-hash/file', { input })).body.data.hash as string;
      for (let i = 0; i < 2; i++) {
        expect(recorded[i]!.ciphertext).to.equal(await hashOf(answered[i]!.ciphertext as string));
        expect(recorded[i]!.key_version).to.equal(1);
      }
      expect(recorded[0]!.reference).to.equal(await hashOf('first'));
      expect(recorded[2]!.error).to.equal(await hashOf(answered[2]!.error as string));
    } finally {
      await server.close();
      await dir.remove();
    }
  });
});
