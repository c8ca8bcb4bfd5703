/**
 * A Keywarden server with the cloud auth method mounted at auth/cloud, and a fake cloud provider
 * it reaches only through config/client endpoints. The environment points instance-metadata
 * lookups at the fake (never at the link-local address) and keeps provider timeouts short.
 */
import { pino } from 'pino';
import { startUnsealedServer, testConfig, type ManualClock } from '../../helpers/server.js';
import { TestClient, type TestResponse } from '../../helpers/http.js';
import { startServer, type RunningServer } from '../../../core/server.js';
import { FakeCloud } from '../../fixtures/cloud/server.js';
import { World, signing, type AccessKey, type Instance, type User } from '../../fixtures/cloud/world.js';
import { signedLogin, type LoginSigningOptions } from '../../fixtures/cloud/sign.js';
import { documentPkcs7, documentSignature, identityDocument, testSigners, type Pkcs7Options, type TestSigner } from '../../fixtures/cloud/documents.js';

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
  /** Registers the fake provider's three test certificates through config/certificate. */
  registerTestCertificates(): Promise<void>;
  /** Posts an ec2 login for an instance, signed by the fake's test signers. */
  ec2Login(instance: Instance, options?: Ec2LoginOptions): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface Ec2LoginOptions extends Pkcs7Options {
  /** Which metadata document the client sends (default rsa2048). */
  readonly style?: 'rsa2048' | 'pkcs7' | 'identity';
  readonly role?: string;
  /** Sent as is; omitted when undefined. */
  readonly nonce?: string;
  /** Another document than the instance's own (tampering). */
  readonly document?: string;
  /** Another signer than the fake's own for the style. */
  readonly signer?: TestSigner;
}

/** The login body of an ec2 login as a client sends it: pkcs7 without newlines, or base64 identity and signature. */
export function ec2LoginBody(instance: Instance, options: Ec2LoginOptions = {}): Record<string, unknown> {
  const document = options.document ?? identityDocument(instance);
  const signers = testSigners();
  const style = options.style ?? 'rsa2048';
  const proof =
    style === 'identity'
      ? { identity: Buffer.from(document, 'utf8').toString('base64'), signature: documentSignature(document, options.signer ?? signers.identity) }
      : { pkcs7: documentPkcs7(document, options.signer ?? signers[style], options).replace(/\n/g, '') };
  return { ...proof, ...(options.role !== undefined ? { role: options.role } : {}), ...(options.nonce !== undefined ? { nonce: options.nonce } : {}) };
}

export interface CloudHarnessOptions {
  readonly clock?: ManualClock;
  /** The server config's cloud_auth.allow_sha1_signatures; absent: no cloud_auth block at all. */
  readonly allowSha1Signatures?: boolean;
  /** LevelDB storage in this directory instead of memory (real I/O between a read and a write). */
  readonly leveldbPath?: string;
}

export async function startCloudHarness(options: CloudHarnessOptions = {}): Promise<CloudHarness> {
  const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
  for (const k of ENV_KEYS) delete process.env[k];
  const world = new World();
  const fake = await new FakeCloud(world).start();
  process.env.CLOUD_METADATA_ENDPOINT = fake.url;
  process.env.CLOUD_PROVIDER_TIMEOUT = '2s';

  const server =
    options.allowSha1Signatures === undefined
      ? await startUnsealedServer({ ...(options.clock ? { clock: options.clock } : {}), ...(options.leveldbPath ? { leveldbPath: options.leveldbPath } : {}) })
      : await startWithCloudAuthConfig(options.allowSha1Signatures, options.clock);
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
    async registerTestCertificates() {
      const signers = testSigners();
      const certificates = [
        ['fake-identity', signers.identity, 'identity'],
        ['fake-pkcs7', signers.pkcs7, 'pkcs7'],
        ['fake-rsa2048', signers.rsa2048, 'pkcs7'],
      ] as const;
      for (const [name, signer, type] of certificates) {
        const res = await root.post(`auth/cloud/config/certificate/${name}`, { cloud_public_cert: signer.certificatePem, type });
        if (res.status !== 204) throw new Error(`config/certificate/${name} failed: ${res.text}`);
      }
    },
    ec2Login(instance, loginOptions = {}) {
      return harness.anon.post('auth/cloud/login', ec2LoginBody(instance, loginOptions));
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

/** A server whose config carries a cloud_auth block, initialised and unsealed like startUnsealedServer's. */
async function startWithCloudAuthConfig(allowSha1Signatures: boolean, clock: ManualClock | undefined): Promise<RunningServer & { client: TestClient }> {
  const server = await startServer({
    config: { ...testConfig(), cloudAuth: { allowSha1Signatures } },
    logger: pino({ level: 'silent' }),
    ...(clock ? { clock } : {}),
  });
  const client = new TestClient(server.address);
  const init = await client.put('sys/init', { secret_shares: 1, secret_threshold: 1 });
  if (init.status !== 200) throw new Error(`init failed: ${init.text}`);
  const unseal = await client.put('sys/unseal', { key: init.body.keys[0] });
  if (unseal.status !== 200 || unseal.body.sealed) throw new Error(`unseal failed: ${unseal.text}`);
  client.token = init.body.root_token as string;
  return Object.assign(server, { client });
}
