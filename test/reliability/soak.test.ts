/**
 * Load soak: mixed traffic (encrypt, decrypt, batch encrypt, HMAC, key reads, token
 * create/lookup/revoke, iam logins when the cloud method is there) from autocannon against the
 * server in its own process on LevelDB, over loopback only. Zero 5xx and no connection errors;
 * heap after a full collection grows no more than 20 % from the end of warm-up to the end; the
 * server's event-loop delay is reported.
 *
 * KEYWARDEN_SOAK=1 (set by .ci/run) runs the full soak: 20 s warm-up and 100 s measured. Without
 * it a short version runs (1 s warm-up, 4 s measured).
 */
import { expect } from 'chai';
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { tempDir } from '../helpers/server.js';
import { Api } from './support/http.js';
import { initialize, unsealWith } from './support/child.js';
import { CANARY_PRINCIPAL, startCanary } from './support/canary.js';
import { iamLogin } from './support/cloud.js';

const FULL = process.env.KEYWARDEN_SOAK === '1';
const WARM_UP_S = FULL ? 20 : 1;
const MEASURE_S = FULL ? 100 : 4;
const CONNECTIONS = 8;
const HARNESS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support', 'soak-server.js');
const b64 = (text: string) => Buffer.from(text).toString('base64');

interface Stats {
  heapUsed: number;
  rss: number;
  eld: { mean: number; p50: number; p99: number; max: number };
}

function ask(child: ChildProcess, message: object): Promise<Stats> {
  return new Promise((resolve) => {
    child.once('message', (reply) => resolve(reply as Stats));
    child.send(message);
  });
}

type Context = Record<string, string>;

/** One cycle per connection, repeated: every request valid, so every answer must be a 2xx. */
function mixedTraffic(rootToken: string, logins: boolean): autocannon.Request[] {
  const json = (token: string) => ({ 'content-type': 'application/json', 'x-vault-token': token });
  const plaintext = b64('soak plaintext: order #4711, 3 widgets');
  const batch = JSON.stringify({ batch_input: Array.from({ length: 16 }, (_, i) => ({ plaintext: b64(`item ${i}`) })) });
  const requests: autocannon.Request[] = [
    {
      method: 'POST',
      path: '/v1/soak/transit/encrypt/orders',
      headers: json(rootToken),
      body: JSON.stringify({ plaintext }),
      onResponse: (status, body, context) => {
        if (status === 200) (context as Context).ciphertext = JSON.parse(body).data.ciphertext;
      },
    },
    {
      method: 'POST',
      path: '/v1/soak/transit/decrypt/orders',
      headers: json(rootToken),
      setupRequest: (req, context) => ({ ...req, body: JSON.stringify({ ciphertext: (context as Context).ciphertext }) }),
    },
    { method: 'POST', path: '/v1/soak/transit/encrypt/orders', headers: json(rootToken), body: batch },
    { method: 'POST', path: '/v1/soak/transit/hmac/orders', headers: json(rootToken), body: JSON.stringify({ input: plaintext }) },
    { method: 'GET', path: '/v1/soak/transit/keys/orders', headers: json(rootToken) },
    {
      method: 'POST',
      path: '/v1/auth/token/create',
      headers: json(rootToken),
      body: JSON.stringify({ policies: ['default'], ttl: '10m' }),
      onResponse: (status, body, context) => {
        if (status === 200) (context as Context).token = JSON.parse(body).auth.client_token;
      },
    },
    { method: 'GET', path: '/v1/auth/token/lookup-self', setupRequest: (req, context) => ({ ...req, headers: json((context as Context).token!) }) },
    { method: 'POST', path: '/v1/auth/token/revoke-self', setupRequest: (req, context) => ({ ...req, headers: json((context as Context).token!), body: '{}' }) },
    { method: 'GET', path: '/v1/sys/health' },
  ];
  if (logins) {
    requests.push(
      {
        method: 'POST',
        path: '/v1/auth/cloud/login',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...iamLogin(), role: 'soak' }),
        onResponse: (status, body, context) => {
          if (status === 200) (context as Context).login = JSON.parse(body).auth.client_token;
        },
      },
      { method: 'GET', path: '/v1/auth/token/lookup-self', setupRequest: (req, context) => ({ ...req, headers: json((context as Context).login!) }) },
      { method: 'POST', path: '/v1/auth/token/revoke-self', setupRequest: (req, context) => ({ ...req, headers: json((context as Context).login!), body: '{}' }) },
    );
  }
  return requests;
}

function load(url: string, requests: autocannon.Request[], seconds: number): Promise<autocannon.Result> {
  return autocannon({ url, connections: CONNECTIONS, duration: seconds, requests, timeout: 30 }) as unknown as Promise<autocannon.Result>;
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

describe(`load soak (${FULL ? 'full: KEYWARDEN_SOAK=1' : 'short: set KEYWARDEN_SOAK=1 for the full one'})`, function () {
  this.timeout((WARM_UP_S + MEASURE_S) * 1000 + 120_000);

  it(`mixed traffic for ${WARM_UP_S + MEASURE_S} s: zero 5xx, no connection errors, heap stable within 20 % after warm-up, event-loop delay reported`, async () => {
    const dir = await tempDir('keywarden-soak-');
    const provider = await startCanary('sts-identity');
    const child = fork(HARNESS, [path.join(dir.path, 'data')], { execArgv: ['--expose-gc'], stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    try {
      const { address } = await new Promise<{ address: string }>((resolve, reject) => {
        child.once('message', (m) => resolve(m as { address: string }));
        child.once('exit', (code) => reject(new Error(`soak server exited (${code}):\n${output}`)));
      });
      const api = new Api(address);
      const init = await initialize(api);
      await unsealWith(api, init.keys);
      api.token = init.rootToken;
      await api.expect('POST', 'sys/mounts/soak/transit', { type: 'transit' });
      await api.expect('POST', 'soak/transit/keys/orders', { type: 'aes256-gcm96' });
      const cloud = await api.post('sys/auth/cloud', { type: 'cloud' });
      const logins = cloud.status === 204;
      if (logins) {
        await api.expect('POST', 'auth/cloud/config/client', { access_key: 'AKIASOAK', secret_key: 'soak-secret', sts_endpoint: provider.url, sts_region: 'us-east-1', max_retries: 0 });
        await api.expect('POST', 'auth/cloud/role/soak', { auth_type: 'iam', bound_iam_principal_arn: [CANARY_PRINCIPAL.arn], resolve_cloud_unique_ids: false, token_policies: ['default'], token_ttl: '10m' });
      } else {
        console.log('      (no cloud auth method registered: the mix has no logins yet)');
      }
      const traffic = mixedTraffic(init.rootToken, logins);

      const start = await ask(child, { cmd: 'stats' });
      const warmUp = await load(address, traffic, WARM_UP_S);
      const afterWarmUp = await ask(child, { cmd: 'stats', reset: true });
      const measured = await load(address, traffic, MEASURE_S);
      const end = await ask(child, { cmd: 'stats' });

      const total = warmUp.requests.total + measured.requests.total;
      const fiveXx = warmUp['5xx'] + measured['5xx'];
      const growth = end.heapUsed / afterWarmUp.heapUsed - 1;
      console.log(
        `      ${total} requests (${Math.round(measured.requests.average)}/s measured, latency p50 ${measured.latency.p50} ms, p99 ${measured.latency.p99} ms); ` +
          `2xx ${warmUp['2xx'] + measured['2xx']}, 4xx ${warmUp['4xx'] + measured['4xx']}, 5xx ${fiveXx}, errors ${warmUp.errors + measured.errors}, timeouts ${warmUp.timeouts + measured.timeouts}`,
      );
      console.log(
        `      heap after GC: ${mib(start.heapUsed)} at start, ${mib(afterWarmUp.heapUsed)} after warm-up, ${mib(end.heapUsed)} at the end (${(growth * 100).toFixed(1)} %); ` +
          `RSS ${mib(afterWarmUp.rss)} → ${mib(end.rss)}`,
      );
      console.log(`      server event-loop delay while measured: mean ${end.eld.mean} ms, p50 ${end.eld.p50} ms, p99 ${end.eld.p99} ms, max ${end.eld.max} ms`);

      expect(fiveXx, '5xx answers').to.equal(0);
      expect(warmUp.errors + measured.errors, 'connection errors').to.equal(0);
      expect(warmUp.timeouts + measured.timeouts, 'timeouts').to.equal(0);
      expect(warmUp['4xx'] + measured['4xx'], '4xx answers (every request of the mix is valid)').to.equal(0);
      expect(measured.requests.total, 'requests measured').to.be.greaterThan(MEASURE_S * 10);
      expect(growth, 'heap growth after warm-up').to.be.at.most(0.2);
      expect(output, 'server errors logged during the soak').to.not.match(/"level":50/);
      expect(output, 'the root token in the server log').to.not.contain(init.rootToken);
    } finally {
      child.send({ cmd: 'stop' });
      await new Promise((resolve) => child.once('exit', resolve));
      await provider.close();
      await dir.remove();
    }
  });
});
