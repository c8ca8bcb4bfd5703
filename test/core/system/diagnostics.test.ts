/** sys/host-info, sys/in-flight-req, sys/config/state/sanitized and sys/loggers, over HTTP. */
import os from 'node:os';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../../core/server.js';
import { initAndUnseal, testConfig } from '../../helpers/server.js';
import { TestClient } from '../../helpers/http.js';

describe('sys diagnostics', function () {
  let server: RunningServer;
  let client: TestClient;
  /** Every log line the server wrote, parsed. */
  const lines: { level: number; msg: string; mount?: string }[] = [];

  before(async function () {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    server = await startServer({ config: testConfig(), logger: pino({ level: 'error' }, sink) });
    client = new TestClient(server.address);
    await initAndUnseal({ client }, 1, 1);
    await client.post('sys/mounts/transit', { type: 'transit' });
    await client.put('sys/policies/acl/reader', {
      policy: ['host-info', 'in-flight-req', 'config/state/sanitized', 'loggers', 'loggers/*'].map((p) => `path "sys/${p}" { capabilities = ["read", "update", "delete"] }`).join('\n'),
    });
  });

  after(async function () {
    await server.close();
  });

  it('each needs sudo: a policy granting read, update and delete without it is refused', async function () {
    const reader = (await client.post('auth/token/create', { policies: ['reader'] })).body.auth.client_token as string;
    for (const path of ['sys/host-info', 'sys/in-flight-req', 'sys/config/state/sanitized', 'sys/loggers', 'sys/loggers/core']) {
      expect((await client.get(path, { token: reader })).status, path).to.equal(403);
    }
    expect((await client.post('sys/loggers', { level: 'debug' }, { token: reader })).status).to.equal(403);
  });

  it('every new path is in the OpenAPI document', async function () {
    const paths = (await client.get('sys/internal/specs/openapi')).body.paths;
    for (const path of ['/sys/metrics', '/sys/host-info', '/sys/in-flight-req', '/sys/config/state/sanitized', '/sys/loggers', '/sys/loggers/{name}']) {
      expect(paths[path], path).to.be.an('object');
    }
    expect(paths['/sys/metrics'].get.parameters.map((p: { name: string }) => p.name)).to.include('format');
  });

  describe('sys/host-info', function () {
    it("reports the host's CPUs, disks, identity and memory in Vault's shape", async function () {
      const res = await client.get('sys/host-info');
      expect(res.status).to.equal(200);
      const data = res.body.data;
      expect(data).to.have.all.keys('cpu', 'cpu_times', 'disk', 'host', 'memory', 'timestamp');
      expect(data.cpu).to.have.length(os.cpus().length);
      expect(data.cpu_times[0]).to.include({ cpu: 'cpu0' });
      expect(data.cpu_times[0].user).to.be.a('number');
      expect(data.host).to.include({ hostname: os.hostname(), os: process.platform, kernelVersion: os.release() });
      expect(data.memory.total).to.equal(os.totalmem());
      expect(data.memory.used + data.memory.free).to.equal(data.memory.total);
      expect(data.disk[0]).to.include({ path: process.cwd() });
      expect(data.disk[0].total).to.be.greaterThan(0);
      expect(new Date(data.timestamp).getTime()).to.be.closeTo(Date.now(), 60_000);
    });
  });

  describe('sys/in-flight-req', function () {
    it('lists the requests being answered, itself included, by request id, without their data', async function () {
      const first = await client.get('sys/in-flight-req');
      expect(first.status).to.equal(200);
      const entries = Object.entries(first.body) as [string, Record<string, string>][];
      expect(entries).to.have.length(1);
      const [id, entry] = entries[0]!;
      expect(id).to.match(/^[0-9a-f-]{36}$/);
      expect(entry).to.include({ request_path: '/v1/sys/in-flight-req', request_method: 'GET', client_remote_address: '127.0.0.1', client_id: '' });
      expect(new Date(entry.start_time!).getTime()).to.be.closeTo(Date.now(), 60_000);
      // The first request is answered and gone; the next one sees only itself.
      const second = await client.get('sys/in-flight-req');
      expect(Object.keys(second.body)).to.have.length(1).and.not.to.include(id);
    });
  });

  describe('sys/config/state/sanitized', function () {
    it('shows the configuration in effect, defaults filled in', async function () {
      const res = await client.get('sys/config/state/sanitized');
      expect(res.status).to.equal(200);
      const data = res.body.data;
      expect(data).to.include({ log_level: 'error', default_lease_ttl: 768 * 3600, periodic_interval: 0 });
      expect(data.storage).to.deep.equal({ type: 'inmem' });
      expect(data.listeners).to.have.length(1);
      expect(data.listeners[0].config).to.include({ address: '127.0.0.1:0', tls_disable: true });
      expect(data.telemetry).to.deep.equal({ prometheus_retention_time: 86400, disable_hostname: false, filter_default: true });
    });
  });

  describe('sys/loggers', function () {
    it('lists core and one logger per mount, at the configured level', async function () {
      const res = await client.get('sys/loggers');
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({ core: 'error', transit: 'error' });
    });

    it("changes a mount's logger alone, then reverts it to the configured level", async function () {
      expect((await client.post('sys/loggers/transit', { level: 'debug' })).status).to.equal(204);
      expect((await client.get('sys/loggers')).body.data).to.deep.equal({ core: 'error', transit: 'debug' });
      expect((await client.get('sys/loggers/transit')).body.data).to.deep.equal({ transit: 'debug' });
      // A reload builds a new backend and logger; the level set for the mount stays.
      expect((await client.put('sys/plugins/reload/backend', { mounts: ['transit'] })).status).to.equal(200);
      expect((await client.get('sys/loggers/transit')).body.data).to.deep.equal({ transit: 'debug' });
      expect((await client.delete('sys/loggers/transit')).status).to.equal(204);
      expect((await client.get('sys/loggers')).body.data).to.deep.equal({ core: 'error', transit: 'error' });
    });

    it('sets every logger, which shows in what the server logs, and DELETE goes back to log_level', async function () {
      expect((await client.post('sys/loggers', { level: 'info' })).status).to.equal(204);
      expect((await client.get('sys/loggers')).body.data).to.deep.equal({ core: 'info', transit: 'info' });
      await client.post('sys/mounts/seen', { type: 'transit' });
      expect(lines.some((l) => l.msg === 'mount enabled' && l.mount === 'seen/')).to.equal(true);

      expect((await client.delete('sys/loggers')).status).to.equal(204);
      expect((await client.get('sys/loggers')).body.data).to.deep.equal({ core: 'error', seen: 'error', transit: 'error' });
      await client.post('sys/mounts/unseen', { type: 'transit' });
      expect(lines.some((l) => l.mount === 'unseen/')).to.equal(false);
    });

    it('accepts Vault level names and refuses unknown levels and loggers, naming them', async function () {
      expect((await client.post('sys/loggers/core', { level: 'warning' })).status).to.equal(204);
      expect((await client.get('sys/loggers/core')).body.data).to.deep.equal({ core: 'warn' });
      await client.delete('sys/loggers/core');

      const badLevel = await client.post('sys/loggers', { level: 'loud' });
      expect(badLevel.status).to.equal(400);
      expect(badLevel.body.errors[0]).to.match(/level/);
      const missing = await client.post('sys/loggers', {});
      expect(missing.status).to.equal(400);
      expect(missing.body.errors[0]).to.match(/level is required/);
      const unknown = await client.post('sys/loggers/nowhere', { level: 'debug' });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.errors[0]).to.equal('no logger named "nowhere"; GET sys/loggers lists them');
      expect((await client.get('sys/loggers/nowhere')).status).to.equal(404);
    });
  });
});
