/**
 * Where the provider credentials come from, in Vault's order: the static keys of `config/client`,
 * else `CLOUD_ACCESS_KEY` / `CLOUD_SECRET_KEY` (and `CLOUD_SESSION_TOKEN`) from the environment,
 * else the instance metadata service of the machine the server runs on (IMDSv2).
 */
import http from 'node:http';
import { errorMessage } from '../../../sdk/index.js';
import type { ClientConfig } from '../client-config.js';
import { ProviderConfigError, ProviderUnavailableError } from './types.js';

/** The link-local address of the instance metadata service; `CLOUD_METADATA_ENDPOINT` overrides it. */
export const DEFAULT_METADATA_ENDPOINT = 'http://169.254.169.254';

/** Refresh metadata credentials this long before they expire. */
const EXPIRY_MARGIN_MS = 5 * 60 * 1000;

/** Credentials as the SDK clients take them. */
export interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

export type CredentialsProvider = () => Promise<Credentials>;

export interface CredentialSources {
  readonly config: ClientConfig | undefined;
  /** Read when credentials are needed, so a changed environment applies after a flush. */
  readonly env: NodeJS.ProcessEnv;
  /** Connection and answer timeout for metadata calls, ms. */
  readonly timeoutMs: number;
}

export function baseCredentials(sources: CredentialSources): CredentialsProvider {
  const { config, env } = sources;
  if (config && (config.access_key || config.secret_key)) {
    if (!config.access_key || !config.secret_key) {
      throw new ProviderConfigError('static credentials in config/client are incomplete: set both access_key and secret_key');
    }
    const fixed = { accessKeyId: config.access_key, secretAccessKey: config.secret_key };
    return async () => fixed;
  }
  if (env.CLOUD_ACCESS_KEY && env.CLOUD_SECRET_KEY) {
    const fixed = {
      accessKeyId: env.CLOUD_ACCESS_KEY,
      secretAccessKey: env.CLOUD_SECRET_KEY,
      ...(env.CLOUD_SESSION_TOKEN ? { sessionToken: env.CLOUD_SESSION_TOKEN } : {}),
    };
    return async () => fixed;
  }
  return metadataCredentials(env.CLOUD_METADATA_ENDPOINT || DEFAULT_METADATA_ENDPOINT, sources.timeoutMs);
}

/** The region for calls that have none of their own (STS, IAM): `CLOUD_REGION`, else us-east-1. */
export function defaultRegion(env: NodeJS.ProcessEnv): string {
  return env.CLOUD_REGION || 'us-east-1';
}

/**
 * Credentials of the instance profile, from the metadata service (IMDSv2: a session token first,
 * then the role name, then the role's credentials), kept until shortly before they expire.
 */
export function metadataCredentials(endpoint: string, timeoutMs: number): CredentialsProvider {
  let cached: Credentials | undefined;
  return async () => {
    if (cached && (!cached.expiration || cached.expiration.getTime() - Date.now() > EXPIRY_MARGIN_MS)) return cached;
    const fail = (why: string): never => {
      throw new ProviderUnavailableError(`no credentials in config/client or the environment, and the instance metadata service at ${endpoint} gave none: ${why}`);
    };
    let token: string;
    try {
      token = await metadataCall(endpoint, 'PUT', '/latest/api/token', { 'x-aws-ec2-metadata-token-ttl-seconds': '21600' }, timeoutMs);
      const roles = await metadataCall(endpoint, 'GET', '/latest/meta-data/iam/security-credentials/', { 'x-aws-ec2-metadata-token': token }, timeoutMs);
      const role = roles.split('\n')[0]?.trim();
      if (!role) return fail('the instance has no instance profile');
      const body = await metadataCall(endpoint, 'GET', `/latest/meta-data/iam/security-credentials/${encodeURIComponent(role)}`, { 'x-aws-ec2-metadata-token': token }, timeoutMs);
      const parsed = JSON.parse(body) as { AccessKeyId?: string; SecretAccessKey?: string; Token?: string; Expiration?: string };
      if (!parsed.AccessKeyId || !parsed.SecretAccessKey) return fail('the answer has no access key');
      cached = {
        accessKeyId: parsed.AccessKeyId,
        secretAccessKey: parsed.SecretAccessKey,
        ...(parsed.Token ? { sessionToken: parsed.Token } : {}),
        ...(parsed.Expiration ? { expiration: new Date(parsed.Expiration) } : {}),
      };
      return cached;
    } catch (err) {
      if (err instanceof ProviderUnavailableError) throw err;
      return fail(errorMessage(err));
    }
  };
}

function metadataCall(endpoint: string, method: string, path: string, headers: Record<string, string>, timeoutMs: number): Promise<string> {
  const url = new URL(path, endpoint);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, timeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) reject(new Error(`${method} ${path} answered ${res.statusCode}`));
        else resolve(text);
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}
