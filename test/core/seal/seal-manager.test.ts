/**
 * What the seal manager reports while an unseal is under way (issue #32): `sys/seal-status` and
 * `sys/health` say unsealed only once the post-unseal setup (mounts, policies, tokens) is done, as
 * Vault does, so a client that waits for `sealed: false` is never answered by a server that has
 * not loaded its mounts yet.
 */
import { expect } from 'chai';
import type { HostRequest, HostResponse } from '../../../core/pipeline/types.js';
import { initAndUnseal, startTestServer, tempDir } from '../../helpers/server.js';

describe('seal manager: the state seal-status reports during an unseal', function () {
  this.timeout(60_000);

  it('says unsealed (seal-status and health) only once the mounted paths answer', async () => {
    const dir = await tempDir('keywarden-seal-status-');
    const server = await startTestServer({ leveldbPath: dir.path });
    try {
      const { keys, rootToken: token } = await initAndUnseal(server, 1, 1);
      const mounted = await server.client.post('sys/mounts/kv', { type: 'kv', options: { version: '1' } });
      expect(mounted.status, mounted.text).to.equal(204);
      expect((await server.client.put('kv/marker', { value: 'there' })).status).to.equal(204);
      expect((await server.client.put('sys/seal')).status).to.equal(204);

      const handle = (method: string, path: string, body?: unknown): Promise<HostResponse> =>
        server.host.handle({ method, path, query: {}, body, headers: { 'x-vault-token': token }, remoteAddress: '127.0.0.1' } satisfies HostRequest);
      let settled = false;
      const unseal = handle('PUT', 'sys/unseal', { key: keys[0] }).finally(() => (settled = true));
      const seen: { status: number; health: number; read: number }[] = [];
      while (!settled) {
        const status = await handle('GET', 'sys/seal-status');
        if (!(status.body as { sealed: boolean }).sealed) {
          const health = await handle('GET', 'sys/health');
          const read = await handle('GET', 'kv/marker');
          seen.push({ status: status.status, health: health.status, read: read.status });
        }
        // The unseal's storage reads complete on later turns of the loop.
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(((await unseal).body as { sealed: boolean }).sealed).to.equal(false);
      // Every answer that said unsealed was followed by a served read and a healthy server.
      for (const answer of seen) expect(answer).to.deep.equal({ status: 200, health: 200, read: 200 });
    } finally {
      await server.close(0);
      await dir.remove();
    }
  });
});
