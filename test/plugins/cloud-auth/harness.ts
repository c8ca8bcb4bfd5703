/**
 * A Keywarden server with the cloud auth method mounted at auth/cloud, and a fake cloud provider
 * it reaches only through config/client endpoints. The environment points instance-metadata
 * lookups at the fake (never at the link-local address) and keeps provider timeouts short.
 */
import { startUnsealedServer, type ManualClock } from '../../helpers/server.js';
import { TestClient, type TestResponse } from '../../helpers/http.js';
import type { RunningServer } from '../../../core/server.js';
import { FakeCloud } from '../../fixtures/cloud/server.js';
import { World, signing, type AccessKey, type User } from '../../fixtures/cloud/world.js';
import { signedLogin, type LoginSigningOptions } from '../../fixtures/cloud/sign.js';

export const MAIN_ACCOUNT = '111122223333';
export const SATELLITE_ACCOUNT = '444455556666';

const ENV_KEYS = ['CLOUD_ACCESS_KEY', 'CLOUD_SECRET_KEY', 'CLOUD_SESSION_TOKEN', 'CLOUD_REGION', 'CLOUD_METADATA_ENDPOINT', 'CLOUD_PROVIDER_TIMEOUT'] as const;

export interface CloudHarness {
  readonly server: RunningServer & { client: TestClient };
  readonly root: TestClient;
  /** A client without a token, as a workload logging in. */
  readonly anon: TestClient;
  readonly fake: FakeCloud;
  readonly world: World;
  /** The IAM user whose key config/client holds. */
  readonly serviceUser: User;
  serviceKey: AccessKey;
  /** Writes config/client: the fake's endpoints, the service key, no retries, no login header rules; `extra` on top. */
  configure(extra?: Record<string, unknown>): Promise<void>;
  /** Signs a login for the key and posts it to auth/cloud/login. */
  login(key: AccessKey, options?: Omit<LoginSigningOptions, 'credentials'>): Promise<TestResponse>;
  writeRole(name: string, body: Record<string, unknown>): Promise<TestResponse>;
  close(): Promise<void>;
}

export async function startCloudHarness(options: { clock?: ManualClock } = {}): Promise<CloudHarness> {
  const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  for (const k of ENV_KEYS) delete process.env[k];
  const world = new World();
  const fake = await new FakeCloud(world).start();
  process.env.CLOUD_METADATA_ENDPOINT = fake.url;
  process.env.CLOUD_PROVIDER_TIMEOUT = '2s';

  const server = await startUnsealedServer(options.clock ? { clock: options.clock } : {});
  const root = server.client;
  const mounted = await root.post('sys/auth/cloud', { type: 'cloud' });
  if (mounted.status !== 204) throw new Error(`mounting auth/cloud failed: ${mounted.text}`);

  const serviceUser = world.addUser(MAIN_ACCOUNT, 'keywarden-service');
  const harness: CloudHarness = {
    server,
    root,
    anon: new TestClient(server.address),
    fake,
    world,
    serviceUser,
    serviceKey: world.keyFor(serviceUser),
    async configure(extra = {}) {
      const res = await root.post('auth/cloud/config/client', {
        access_key: harness.serviceKey.accessKeyId,
        secret_key: harness.serviceKey.secretAccessKey,
        endpoint: fake.url,
        iam_endpoint: fake.url,
        sts_endpoint: fake.url,
        sts_region: 'us-east-1',
        max_retries: 0,
        use_sts_region_from_client: false,
        iam_server_id_header_value: '',
        allowed_sts_header_values: '',
        ...extra,
      });
      if (res.status !== 204) throw new Error(`config/client failed: ${res.text}`);
    },
    async login(key, signOptions = {}) {
      return harness.anon.post('auth/cloud/login', await signedLogin({ credentials: signing(key), ...signOptions }));
    },
    writeRole(name, body) {
      return root.post(`auth/cloud/role/${name}`, body);
    },
    async close() {
      await server.close();
      await fake.close();
      for (const k of ENV_KEYS) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    },
  };
  return harness;
}
