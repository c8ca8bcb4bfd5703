/**
 * Vault's awskms seal (https://developer.hashicorp.com/vault/docs/configuration/seal/awskms),
 * through the AWS SDK's KMS client. An envelope, as Vault's: a random data key seals the root key
 * with AES-256-GCM here, and KMS `Encrypt`s the data key under `kms_key_id`; opening asks KMS to
 * `Decrypt` the data key without a key id (the ciphertext names its key), so a node whose
 * `kms_key_id` has moved on (an alias pointed at another key) still opens what the old key wrapped.
 *
 * Where a setting comes from, as Vault reads it: `kms_key_id` from VAULT_AWSKMS_SEAL_KEY_ID, then
 * the stanza; `endpoint` from AWS_KMS_ENDPOINT, then the stanza; `region` from the stanza, then
 * AWS_REGION, AWS_DEFAULT_REGION, then us-east-1; the credentials from the stanza, then
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, then the SDK's chain (shared
 * files, instance or task roles).
 */
import { randomBytes } from 'node:crypto';
import type { KMSClient } from '@aws-sdk/client-kms';
import { IntegrityError, UnavailableError } from '../errors.js';
import { ConfigError } from '../config/config-values.js';
import { isEndpoint } from '../config/seal-stanza.js';
import type { AwsKmsSealConfig } from '../config/settings.js';
import { gcmOpen, gcmSeal, zeroize } from '../../storage/aead.js';
import type { AutoSeal, WrappedKey } from './auto-seal.js';

const DEFAULT_REGION = 'us-east-1';
/** How long one call to KMS may take, connecting and answering. */
const REQUEST_TIMEOUT_MS = 15_000;
/**
 * The SDK's attempts per call: one retry for a dropped connection. The auto-unseal loop
 * (auto-unseal.ts) retries the whole unseal with its own backoff.
 */
const MAX_ATTEMPTS = 2;
/** KMS's answers when a ciphertext is not one of its keys' (https://docs.aws.amazon.com/kms/latest/APIReference/API_Decrypt.html). */
const NOT_OURS = new Set(['InvalidCiphertextException', 'IncorrectKeyException']);

/**
 * The SDK's KMS module and its HTTP handler, loaded on first use: a server without an awskms seal
 * never pays for them in start-up time or memory.
 */
let kmsModule: Promise<typeof import('@aws-sdk/client-kms')> | undefined;
const loadKms = () => (kmsModule ??= import('@aws-sdk/client-kms'));
let httpModule: Promise<typeof import('@smithy/node-http-handler')> | undefined;
const loadHttp = () => (httpModule ??= import('@smithy/node-http-handler'));

export class AwsKmsSeal implements AutoSeal {
  readonly type = 'awskms';
  private readonly keyId: string;
  private readonly region: string;
  private readonly endpoint: string | undefined;
  private readonly credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  private client: Promise<KMSClient> | undefined;
  private closed = false;

  /** @throws ConfigError without a key id, or with an AWS_KMS_ENDPOINT that is not a URL. */
  constructor(config: AwsKmsSealConfig, env: NodeJS.ProcessEnv = process.env) {
    const keyId = env.VAULT_AWSKMS_SEAL_KEY_ID || config.kmsKeyId;
    if (!keyId) throw new ConfigError('seal.awskms.kms_key_id: a key is required (kms_key_id in the stanza, or VAULT_AWSKMS_SEAL_KEY_ID)');
    this.keyId = keyId;
    this.region = config.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || DEFAULT_REGION);
    const endpoint = env.AWS_KMS_ENDPOINT?.replace(/\/+$/, '') || config.endpoint;
    if (endpoint !== undefined && !isEndpoint(endpoint)) throw new ConfigError(`AWS_KMS_ENDPOINT: must be a URL like "https://kms.us-east-1.amazonaws.com", got "${endpoint}"`);
    this.endpoint = endpoint;
    if (config.accessKey && config.secretKey) {
      this.credentials = { accessKeyId: config.accessKey, secretAccessKey: config.secretKey, ...(config.sessionToken ? { sessionToken: config.sessionToken } : {}) };
    } else if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
      this.credentials = { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) };
    }
  }

  /**
   * Seals `plaintext` under a fresh data key and has KMS encrypt the data key. The key id kept
   * names the key KMS used and its current key material, so that a rotation (new material under
   * the same key) or another key behind the alias re-wraps the root key at the next start.
   */
  async wrap(plaintext: Buffer, aad: Buffer): Promise<WrappedKey> {
    const kms = await loadKms();
    const client = await this.kms();
    const described = await this.call('DescribeKey', () => client.send(new kms.DescribeKeyCommand({ KeyId: this.keyId })));
    const dataKey = randomBytes(32);
    try {
      const sealed = gcmSeal(dataKey, plaintext, aad);
      const out = await this.call('Encrypt', () => client.send(new kms.EncryptCommand({ KeyId: this.keyId, Plaintext: dataKey })));
      if (!out.CiphertextBlob || !out.KeyId) throw new UnavailableError(`awskms seal: KMS answered Encrypt for "${this.keyId}" without a ciphertext`);
      const meta = described.KeyMetadata;
      // The material is the current one of the key DescribeKey saw; a key it did not see (the alias
      // moved in between) is named by its ARN alone, and the next start names it fully.
      const material = meta?.Arn === out.KeyId ? meta.CurrentKeyMaterialId : undefined;
      return {
        type: 'awskms',
        key_id: material ? `${out.KeyId}#${material}` : out.KeyId,
        ciphertext: `${Buffer.from(out.CiphertextBlob).toString('base64')}.${sealed.toString('base64')}`,
      };
    } finally {
      zeroize(dataKey);
    }
  }

  async unwrap(wrapped: WrappedKey, aad: Buffer): Promise<Buffer> {
    const [blob, sealed, extra] = wrapped.ciphertext.split('.');
    if (!blob || !sealed || extra !== undefined) throw new IntegrityError('awskms seal: the stored wrapped root key is malformed');
    const kms = await loadKms();
    const client = await this.kms();
    // Without KeyId: KMS reads the key from the ciphertext, as Vault asks it.
    const out = await this.call('Decrypt', () => client.send(new kms.DecryptCommand({ CiphertextBlob: Buffer.from(blob, 'base64') })));
    if (!out.Plaintext) throw new UnavailableError('awskms seal: KMS answered Decrypt without a plaintext');
    const dataKey = Buffer.from(out.Plaintext);
    zeroize(out.Plaintext);
    try {
      return gcmOpen(dataKey, Buffer.from(sealed, 'base64'), aad);
    } catch (err) {
      if (err instanceof IntegrityError) throw new IntegrityError('awskms seal: the data key KMS decrypted does not open the stored root key');
      throw err;
    } finally {
      zeroize(dataKey);
    }
  }

  close(): void {
    this.closed = true;
    void this.client?.then((client) => client.destroy());
  }

  private kms(): Promise<KMSClient> {
    if (this.closed) return Promise.reject(new UnavailableError('awskms seal: closed'));
    this.client ??= Promise.all([loadKms(), loadHttp()]).then(
      ([{ KMSClient }, { NodeHttpHandler }]) =>
        new KMSClient({
          region: this.region,
          ...(this.credentials ? { credentials: this.credentials } : {}),
          ...(this.endpoint ? { endpoint: this.endpoint } : {}),
          maxAttempts: MAX_ATTEMPTS,
          requestHandler: new NodeHttpHandler({ connectionTimeout: REQUEST_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true }),
        }),
    );
    return this.client;
  }

  /**
   * One KMS call. What KMS refuses is an UnavailableError naming its code (the node stays sealed and
   * tries again: credentials or a key policy may be fixed meanwhile), except a ciphertext that no
   * key of KMS opens, an IntegrityError.
   */
  private async call<T>(operation: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      const e = err as { name?: string; message?: string; code?: string; $metadata?: unknown };
      const where = this.endpoint ?? `KMS in ${this.region}`;
      if (e.$metadata !== undefined && e.name) {
        const reason = `${e.name}${e.message ? `: ${e.message}` : ''}`;
        if (NOT_OURS.has(e.name)) throw new IntegrityError(`awskms seal: ${where} cannot decrypt the stored data key with any key it has (${reason})`);
        throw new UnavailableError(`awskms seal: ${where} refused ${operation} for key "${this.keyId}" (${reason})`);
      }
      throw new UnavailableError(`awskms seal: cannot ${operation} through ${where}: ${e.code ?? e.name ?? 'error'}${e.message ? `: ${e.message}` : ''}`);
    }
  }
}
