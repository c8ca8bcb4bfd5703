/** Automatic barrier key rotation (`sys/rotate/config`) and the encryption count of `sys/key-status`, over HTTP. */
import { expect } from 'chai';
import { ManualClock, initAndUnseal, startTestServer, startUnsealedServer, tempDir } from '../../helpers/server.js';
import type { TestClient } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';

type Server = RunningServer & { client: TestClient };

const DAY = 24 * 3600;

describe('sys/rotate/config and automatic barrier rotation', () => {
  describe('settings', () => {
    let server: Server;
    let client: TestClient;
    before(async () => {
      server = await startUnsealedServer();
      client = server.client;
    });
    after(() => server.close());

    it('reads Vault\'s defaults: enabled, 3865470566 operations, no interval', async () => {
      const res = await client.get('sys/rotate/config');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data).to.deep.equal({ max_operations: 3_865_470_566, enabled: true, interval: 0 });
    });

    it('changes only the fields given, and reads an interval back as a Go duration', async () => {
      expect((await client.post('sys/rotate/config', { interval: '48h' })).status).to.equal(204);
      expect((await client.post('sys/rotate/config', { max_operations: 2_000_000 })).status).to.equal(204);
      expect((await client.get('sys/rotate/config')).body.data).to.deep.equal({ max_operations: 2_000_000, enabled: true, interval: '48h0m0s' });
      expect((await client.post('sys/rotate/config', { enabled: false, interval: 0 })).status).to.equal(204);
      expect((await client.get('sys/rotate/config')).body.data).to.deep.equal({ max_operations: 2_000_000, enabled: false, interval: 0 });
      expect((await client.post('sys/rotate/config', { interval: 86400, enabled: 'true' })).status).to.equal(204);
      expect((await client.get('sys/rotate/config')).body.data).to.include({ interval: '24h0m0s', enabled: true });
    });

    it('refuses values out of Vault\'s ranges with a 400 naming the field, and changes nothing', async () => {
      const before = (await client.get('sys/rotate/config')).body.data;
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ max_operations: 999_999 }, /max_operations.*at least 1000000/],
        [{ max_operations: 3_865_470_567 }, /max_operations.*at most 3865470566/],
        [{ max_operations: 'many' }, /max_operations/],
        [{ interval: '23h59m59s' }, /interval must be 0 or at least 24h0m0s/],
        [{ interval: '-24h' }, /interval/],
        [{ enabled: 'maybe' }, /enabled/],
      ];
      for (const [body, message] of cases) {
        const res = await client.post('sys/rotate/config', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.errors[0], JSON.stringify(body)).to.match(message);
      }
      expect((await client.get('sys/rotate/config')).body.data).to.deep.equal(before);
    });

    it('needs a token whose policy grants the path', async () => {
      const created = await client.post('auth/token/create', { policies: ['default'] });
      const token = created.body.auth.client_token as string;
      expect((await client.get('sys/rotate/config', { token })).status).to.equal(403);
      expect((await client.post('sys/rotate/config', { enabled: false }, { token })).status).to.equal(403);
    });

    it('is listed in the OpenAPI document with both operations', async () => {
      const doc = (await client.get('sys/internal/specs/openapi')).body;
      const path = doc.paths['/sys/rotate/config'];
      expect(path, 'sys/rotate/config in OpenAPI').to.be.an('object');
      expect(path).to.have.property('get');
      expect(path).to.have.property('post');
    });
  });

  describe('rotation by the active node\'s periodic check', () => {
    let clock: ManualClock;
    let server: Server & { rootToken: string };
    let client: TestClient;
    const term = async () => (await client.get('sys/key-status')).body.data.term as number;

    beforeEach(async () => {
      clock = new ManualClock();
      server = await startUnsealedServer({ clock });
      client = server.client;
    });
    afterEach(() => server.close());

    it('rotates once the active term is older than the interval, and old data stays readable', async () => {
      await client.post('sys/mounts/transit', { type: 'transit' });
      await client.post('transit/keys/orders', {});
      const sealed = (await client.post('transit/encrypt/orders', { plaintext: 'b3JkZXI=' })).body.data.ciphertext as string;
      expect((await client.post('sys/rotate/config', { interval: '24h' })).status).to.equal(204);

      clock.advance(DAY);
      await server.host.runPeriodic();
      expect(await term(), 'exactly 24h old is not older than 24h').to.equal(1);

      clock.advance(1);
      await server.host.runPeriodic();
      expect(await term()).to.equal(2);
      const status = (await client.get('sys/key-status')).body.data;
      expect(Date.parse(status.install_time)).to.equal(clock.now().getTime());
      expect((await client.post('transit/decrypt/orders', { ciphertext: sealed })).body.data.plaintext).to.equal('b3JkZXI=');

      await server.host.runPeriodic();
      expect(await term(), 'the new term is young').to.equal(2);
    });

    it('does not rotate while disabled, though the interval has passed', async () => {
      await client.post('sys/rotate/config', { interval: '24h', enabled: false });
      clock.advance(30 * DAY);
      await server.host.runPeriodic();
      expect(await term()).to.equal(1);
      await client.post('sys/rotate/config', { enabled: true });
      await server.host.runPeriodic();
      expect(await term()).to.equal(2);
    });

    it('rotates once the active term has done more encryptions than max_operations', async () => {
      // The API's floor is a million; the barrier takes a low threshold straight, which keeps the test short.
      const config = server.host.barrier.rotationConfig();
      await server.host.barrier.setRotationConfig({ ...config, maxOperations: 20 });
      await client.post('sys/mounts/notes', { type: 'notes' });
      const count = async () => (await client.get('sys/key-status')).body.data.encryptions as number;
      let written = 0;
      while ((await count()) < 20) await client.post(`notes/notes/n${written++}`, { text: 'x' });
      if ((await count()) === 20) {
        await server.host.runPeriodic();
        expect(await term(), 'at the threshold, not over it').to.equal(1);
        await client.post(`notes/notes/n${written++}`, { text: 'x' });
      }
      expect(await term(), 'not before the periodic check').to.equal(1);
      await server.host.runPeriodic();
      expect(await term()).to.equal(2);
      expect((await client.get('sys/key-status')).body.data.encryptions).to.be.below(5);
      expect((await client.get('notes/notes/n0')).body.data.text).to.equal('x');
    });
  });

  describe('the encryption count', () => {
    it('counts each value the barrier encrypts, and starts again at a rotation', async () => {
      const server = await startUnsealedServer();
      try {
        const client = server.client;
        await client.post('sys/mounts/notes', { type: 'notes' });
        const before = (await client.get('sys/key-status')).body.data.encryptions as number;
        for (let i = 0; i < 5; i++) await client.post(`notes/notes/n${i}`, { text: String(i) });
        expect((await client.get('sys/key-status')).body.data.encryptions).to.equal(before + 5);
        await client.put('sys/rotate');
        expect((await client.get('sys/key-status')).body.data.encryptions).to.equal(0);
      } finally {
        await server.close();
      }
    });

    it('survives a restart, with the settings, as the count is stored on seal', async () => {
      const dir = await tempDir();
      try {
        let server = await startTestServer({ leveldbPath: dir.path });
        const { keys, rootToken } = await initAndUnseal(server, 1, 1);
        await server.client.post('sys/mounts/notes', { type: 'notes' });
        for (let i = 0; i < 5; i++) await server.client.post(`notes/notes/n${i}`, { text: String(i) });
        await server.client.put('sys/rotate');
        for (let i = 0; i < 3; i++) await server.client.post(`notes/notes/m${i}`, { text: String(i) });
        await server.client.post('sys/rotate/config', { interval: '72h', max_operations: 5_000_000 });
        const counted = (await server.client.get('sys/key-status')).body.data;
        expect(counted.term).to.equal(2);
        expect(counted.encryptions).to.be.at.least(3);
        await server.close();

        server = await startTestServer({ leveldbPath: dir.path });
        await server.client.put('sys/unseal', { key: keys[0] });
        server.client.token = rootToken;
        try {
          const after = (await server.client.get('sys/key-status')).body.data;
          expect(after.term).to.equal(2);
          expect(after.install_time).to.equal(counted.install_time);
          // At least what was counted before the restart: unsealing may encrypt a little more.
          expect(after.encryptions).to.be.at.least(counted.encryptions);
          expect((await server.client.get('sys/rotate/config')).body.data).to.deep.equal({ max_operations: 5_000_000, enabled: true, interval: '72h0m0s' });
        } finally {
          await server.close();
        }
      } finally {
        await dir.remove();
      }
    });
  });
});
