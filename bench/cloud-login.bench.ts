/**
 * iam login latency over HTTP against the real server (dev mode, its own process), beside the fake
 * cloud provider's own round trip for the same signed GetCallerIdentity request — the part of a
 * login that is the provider's and not ours. One connection, so latencies are not queueing.
 */
import autocannon from 'autocannon';
import { report } from './lib/report.js';
import { startBenchServer } from './lib/server.js';
import { FakeCloud } from '../test/fixtures/cloud/server.js';
import { World, signing } from '../test/fixtures/cloud/world.js';
import { signedLogin, GET_CALLER_IDENTITY_BODY } from '../test/fixtures/cloud/sign.js';

const SECONDS = Number(process.env.BENCH_DURATION ?? 5);

async function latency(url: string, body: string, headers: Record<string, string>): Promise<{ mean: number; p50: number; p99: number; rps: number }> {
  const result = await autocannon({ url, method: 'POST', body, headers, connections: 1, duration: SECONDS });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { mean: result.latency.average, p50: result.latency.p50, p99: result.latency.p99, rps: result.requests.average };
}

async function main(): Promise<void> {
  const world = new World();
  const fake = await new FakeCloud(world).start();
  // The server process must never look for instance metadata on the network.
  process.env.CLOUD_METADATA_ENDPOINT = fake.url;
  const server = await startBenchServer();
  try {
    const serverUser = world.addUser('111122223333', 'keywarden-server');
    const app = world.addUser('111122223333', 'bench-app');
    const serverKey = world.keyFor(serverUser);
    await server.request('POST', 'auth/cloud/config/client', {
      access_key: serverKey.accessKeyId,
      secret_key: serverKey.secretAccessKey,
      endpoint: fake.url,
      iam_endpoint: fake.url,
      sts_endpoint: fake.url,
      max_retries: 0,
    });
    await server.request('POST', 'auth/cloud/role/bench-app', { auth_type: 'iam', bound_iam_principal_arn: app.arn, token_policies: 'default' });
    const login = await signedLogin({ credentials: signing(world.keyFor(app)) });
    const loginBody = JSON.stringify({ ...login, role: 'bench-app' });

    const signedHeaders = JSON.parse(Buffer.from(String(login.iam_request_headers), 'base64').toString('utf8')) as Record<string, string[]>;
    const providerHeaders = Object.fromEntries(Object.entries(signedHeaders).map(([k, v]) => [k, v[0]!]));
    const provider = await latency(`${fake.url}/`, GET_CALLER_IDENTITY_BODY, providerHeaders);
    const ours = await latency(`${server.address}/v1/auth/cloud/login`, loginBody, { 'Content-Type': 'application/json' });
    report('cloud-login', [
      { measure: 'iam login (auth/cloud/login)', 'mean ms': ours.mean, 'p50 ms': ours.p50, 'p99 ms': ours.p99, 'req/s': ours.rps },
      { measure: "fake provider's own GetCallerIdentity round trip", 'mean ms': provider.mean, 'p50 ms': provider.p50, 'p99 ms': provider.p99, 'req/s': provider.rps },
      { measure: 'login above the provider round trip', 'mean ms': ours.mean - provider.mean, 'p50 ms': ours.p50 - provider.p50, 'p99 ms': ours.p99 - provider.p99, 'req/s': ours.rps / provider.rps },
    ], [`1 connection, ${SECONDS} s each; autocannon reports p50/p99 in whole milliseconds, the mean exactly; each login mints a token (a LevelDB write) and resolves an identity alias.`]);
  } finally {
    await server.stop();
    await fake.close();
  }
}

await main();
