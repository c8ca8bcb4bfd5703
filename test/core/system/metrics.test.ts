/**
 * sys/metrics over HTTP, as Prometheus and a Vault JSON reader scrape it: the exposition text is
 * parsed by a strict reader of the text format (test/helpers/prometheus.ts), never matched as strings.
 */
import os from 'node:os';
import { expect } from 'chai';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../../../core/server.js';
import type { TelemetryConfig } from '../../../core/config/config.js';
import greeterPlugin from '../../fixtures/plugins/greeter-auth.js';
import { initAndUnseal, testConfig } from '../../helpers/server.js';
import { TestClient, request } from '../../helpers/http.js';
import { parseExposition, type Family } from '../../helpers/prometheus.js';

interface Started {
  readonly server: RunningServer;
  readonly client: TestClient;
}

/** A server with two listeners, the second open to scrapers without a token. */
async function start(telemetry?: TelemetryConfig): Promise<Started> {
  const base = testConfig();
  const server = await startServer({
    config: {
      ...base,
      listeners: [base.listeners[0]!, { ...base.listeners[0]!, unauthenticatedMetricsAccess: true }],
      ...(telemetry ? { telemetry } : {}),
    },
    plugins: [greeterPlugin],
    logger: pino({ level: 'silent' }),
  });
  const client = new TestClient(server.address);
  await initAndUnseal({ client }, 1, 1);
  return { server, client };
}

async function scrape(client: TestClient): Promise<Family[]> {
  const res = await client.get('sys/metrics?format=prometheus');
  expect(res.status, res.text).to.equal(200);
  expect(res.headers['content-type']).to.match(/^text\/plain; version=0\.0\.4/);
  return parseExposition(res.text);
}

function family(families: Family[], name: string): Family {
  const found = families.find((f) => f.name === name);
  if (!found) throw new Error(`no metric ${name} in: ${families.map((f) => f.name).join(', ')}`);
  return found;
}

/** The sample of `name` whose labels include `labels`. */
function sample(families: Family[], name: string, labels: Record<string, string>) {
  const found = family(families, name).metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  if (!found) throw new Error(`no ${name} sample with ${JSON.stringify(labels)}`);
  return found;
}

const value = (families: Family[], name: string, labels: Record<string, string> = {}) => sample(families, name, labels).value;

describe('sys/metrics', function () {
  describe('on a server that collects (the default)', function () {
    let started: Started;
    let client: TestClient;

    before(async function () {
      started = await start();
      client = started.client;
      await client.post('sys/mounts/transit', { type: 'transit' });
      await client.post('sys/auth/greeter', { type: 'greeter' });
      expect((await client.post('transit/keys/orders', { type: 'aes256-gcm96' })).status).to.equal(200);
      const batch = await client.post('transit/encrypt/orders', { batch_input: [{ plaintext: 'YQ==' }, { plaintext: 'Yg==' }, { plaintext: 'Yw==' }] });
      expect(batch.status).to.equal(200);
      expect((await client.post('transit/encrypt/orders', { plaintext: 'ZA==' })).status).to.equal(200);
      expect((await client.post('transit/keys/orders/config', { min_decryption_version: 'first' })).status).to.equal(400);
      expect((await client.post('auth/greeter/login', { user: 'alice' }, { token: '' })).status).to.equal(200);
      expect((await client.post('auth/greeter/login', {}, { token: '' })).status).to.equal(400);
      const created = await client.post('auth/token/create', { policies: ['default'] });
      expect((await client.post('auth/token/revoke', { token: created.body.auth.client_token })).status).to.equal(204);
    });

    after(async function () {
      await started.server.close();
    });

    it('counts requests by mount, operation and status, and times them', async function () {
      const families = await scrape(client);
      // The key written, two encrypts.
      expect(value(families, 'keywarden_requests_total', { mount: 'transit/', operation: 'update', status: '200' })).to.equal(3);
      expect(value(families, 'keywarden_requests_total', { mount: 'transit/', operation: 'update', status: '400' })).to.equal(1);
      expect(value(families, 'keywarden_requests_total', { mount: 'sys/', operation: 'update', status: '204' })).to.be.at.least(2);
      const latency = sample(families, 'keywarden_request_duration_seconds', { mount: 'transit/', operation: 'update' });
      expect(latency.count).to.equal(4);
      expect(latency.sum).to.be.greaterThan(0);
      expect(latency.buckets!['+Inf']).to.equal(4);
      expect(family(families, 'keywarden_request_duration_seconds').type).to.equal('histogram');
    });

    it('counts transit operations by operation and key type, with the batch sizes', async function () {
      const families = await scrape(client);
      expect(value(families, 'keywarden_transit_operations_total', { operation: 'encrypt', key_type: 'aes256-gcm96' })).to.equal(2);
      const batches = sample(families, 'keywarden_transit_batch_items', { operation: 'encrypt' });
      expect(batches.count).to.equal(2);
      expect(batches.sum).to.equal(4);
      expect(batches.buckets!['1']).to.equal(1);
      expect(batches.buckets!['5']).to.equal(2);
    });

    it('counts the items each crypto engine ran', async function () {
      const families = await scrape(client);
      const gcm = family(families, 'keywarden_crypto_items_total').metrics.filter((m) => m.labels?.primitive === 'aes-gcm');
      expect(gcm.map((m) => m.labels!.engine).sort()).to.deep.equal(['hybrid', 'node', 'wasm']);
      // Four items encrypted, and whatever the barrier's own AES-GCM does not count (it is node:crypto outside the dispatcher).
      expect(gcm.reduce((total, m) => total + m.value!, 0)).to.equal(4);
    });

    it('counts logins by method and result, and tokens created and revoked', async function () {
      const families = await scrape(client);
      expect(value(families, 'keywarden_logins_total', { method: 'greeter', mount: 'auth/greeter/', result: 'success' })).to.equal(1);
      expect(value(families, 'keywarden_logins_total', { method: 'greeter', mount: 'auth/greeter/', result: 'failure' })).to.equal(1);
      // The root token, alice's and the created one.
      expect(value(families, 'keywarden_tokens_created_total', { type: 'service' })).to.equal(3);
      expect(value(families, 'keywarden_tokens_revoked_total')).to.equal(1);
    });

    it('reports seal state, storage latency per backend, and the event loop and memory', async function () {
      const families = await scrape(client);
      expect(value(families, 'keywarden_core_unsealed')).to.equal(1);
      expect(sample(families, 'keywarden_storage_operation_duration_seconds', { backend: 'inmem', operation: 'put' }).count).to.be.greaterThan(0);
      expect(sample(families, 'keywarden_storage_operation_duration_seconds', { backend: 'inmem', operation: 'get' }).count).to.be.greaterThan(0);
      expect(value(families, 'keywarden_runtime_resident_memory_bytes')).to.be.greaterThan(1024 * 1024);
      expect(value(families, 'keywarden_runtime_heap_used_bytes')).to.be.greaterThan(0);
      expect(family(families, 'keywarden_runtime_event_loop_delay_seconds').metrics.map((m) => m.labels!.quantile).sort()).to.deep.equal(['0.5', '0.99', '1']);
      expect(value(families, 'keywarden_requests_in_flight')).to.equal(1);
      expect(families.some((f) => f.name.startsWith('keywarden_ha_'))).to.equal(false);
    });

    it('labels every series with the host name', async function () {
      for (const f of await scrape(client)) {
        for (const m of f.metrics) expect(m.labels?.host, f.name).to.equal(os.hostname());
      }
    });

    it("answers JSON in the shape of Vault's in-memory sink by default, outside the envelope", async function () {
      const res = await client.get('sys/metrics');
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.equal('application/json');
      expect(res.body).to.have.all.keys('Timestamp', 'Gauges', 'Counters', 'Samples');
      expect(new Date(res.body.Timestamp).getTime()).to.be.closeTo(Date.now(), 60_000);
      expect(res.body.Gauges).to.deep.include({ Name: 'keywarden_core_unsealed', Value: 1, Labels: { host: os.hostname() } });
      expect(res.body.Counters).to.deep.include({
        Name: 'keywarden_transit_operations_total',
        Count: 2,
        Labels: { operation: 'encrypt', key_type: 'aes256-gcm96', host: os.hostname() },
      });
      const batches = res.body.Samples.find((s: { Name: string }) => s.Name === 'keywarden_transit_batch_items');
      expect(batches).to.deep.include({ Count: 2, Sum: 4, Mean: 2 });
      expect(batches.Buckets['+Inf']).to.equal(2);
    });

    it('refuses to wrap the Prometheus text, and wraps the JSON', async function () {
      const text = await client.get('sys/metrics?format=prometheus', { headers: { 'X-Vault-Wrap-TTL': '5m' } });
      expect(text.status).to.equal(400);
      expect(text.body.errors[0]).to.match(/not JSON and cannot be wrapped/);
      const json = await client.get('sys/metrics', { headers: { 'X-Vault-Wrap-TTL': '5m' } });
      expect(json.status).to.equal(200);
      const unwrapped = await client.post('sys/wrapping/unwrap', undefined, { token: json.body.wrap_info.token });
      expect(unwrapped.body).to.have.property('Gauges');
    });

    it('refuses an unknown format, naming the field', async function () {
      const res = await client.get('sys/metrics?format=statsd');
      expect(res.status).to.equal(400);
      expect(res.body.errors[0]).to.match(/format/);
    });

    it('needs a token with read on sys/metrics, unless the listener opens it to scrapers', async function () {
      expect((await client.get('sys/metrics', { token: '' })).status).to.equal(403);
      await client.put('sys/policies/acl/scraper', { policy: 'path "sys/metrics" { capabilities = ["read"] }' });
      const plain = await client.post('auth/token/create', { policies: ['default'] });
      const scraper = await client.post('auth/token/create', { policies: ['scraper'] });
      expect((await client.get('sys/metrics', { token: plain.body.auth.client_token })).status).to.equal(403);
      expect((await client.get('sys/metrics?format=prometheus', { token: scraper.body.auth.client_token })).status).to.equal(200);

      const open = started.server.addresses[1]!;
      const anonymous = await request(open, 'GET', 'sys/metrics?format=prometheus');
      expect(anonymous.status).to.equal(200);
      expect(parseExposition(anonymous.text).map((f) => f.name)).to.include('keywarden_requests_total');
      // Only sys/metrics is open there.
      expect((await request(open, 'GET', 'sys/in-flight-req')).status).to.equal(403);
    });
  });

  describe('with telemetry settings', function () {
    it('disable_hostname leaves the host label out', async function () {
      const { server, client } = await start({ prometheusRetentionMs: 3600_000, disableHostname: true, collect: true });
      try {
        for (const f of await scrape(client)) for (const m of f.metrics) expect(m.labels?.host, f.name).to.equal(undefined);
      } finally {
        await server.close();
      }
    });

    it('prometheus_retention_time = 0 turns the Prometheus format off and keeps JSON', async function () {
      const { server, client } = await start({ prometheusRetentionMs: 0, disableHostname: false, collect: true });
      try {
        const res = await client.get('sys/metrics?format=prometheus');
        expect(res.status).to.equal(400);
        expect(res.body.errors[0]).to.match(/prometheus is not enabled/);
        expect((await client.get('sys/metrics')).body.Gauges.length).to.be.greaterThan(0);
      } finally {
        await server.close();
      }
    });

    it('filter_default = false collects nothing', async function () {
      const { server, client } = await start({ prometheusRetentionMs: 3600_000, disableHostname: false, collect: false });
      try {
        await client.post('sys/mounts/transit', { type: 'transit' });
        await client.post('transit/keys/k');
        expect((await client.post('transit/encrypt/k', { plaintext: 'YQ==' })).status).to.equal(200);
        expect(await scrape(client)).to.deep.equal([]);
        expect((await client.get('sys/metrics')).body).to.deep.include({ Gauges: [], Counters: [], Samples: [] });
      } finally {
        await server.close();
      }
    });
  });
});
