/**
 * Cross-origin requests (`sys/config/cors`,
 * https://developer.hashicorp.com/vault/api-docs/system/config-cors): the setting, kept behind the
 * barrier and cached, and the answers it governs. With CORS on, a request carrying an `Origin`
 * header from an allowed origin gets `Access-Control-Allow-Origin` and `Vary: Origin`; a
 * preflight (OPTIONS) is answered here with the methods and headers Vault allows; any other
 * origin gets 403. With CORS off, or without an `Origin` header, nothing changes.
 */
import { BadRequestError } from '../errors.js';
import { SerialQueue } from '../seal/serial.js';
import type { Storage } from '../../storage/storage.js';

/** Storage key of the setting, JSON `CorsConfig`. */
export const CORS_CONFIG_KEY = 'core/cors-config';

/** Vault's methods for a preflight answer (LIST is its own verb). */
export const CORS_METHODS = ['DELETE', 'GET', 'OPTIONS', 'POST', 'PUT', 'LIST'] as const;

/** The headers Vault always allows; a configuration's `allowed_headers` are added to them. */
const STANDARD_HEADERS = [
  'Content-Type', 'X-Requested-With', 'X-Vault-AWS-IAM-Server-ID', 'X-Vault-MFA', 'X-Vault-No-Request-Forwarding',
  'X-Vault-Wrap-Format', 'X-Vault-Wrap-TTL', 'X-Vault-Policy-Override', 'Authorization', 'X-Vault-Token',
];

export interface CorsConfig {
  readonly enabled: boolean;
  readonly allowedOrigins: readonly string[];
  /** The standard headers and the configured ones. */
  readonly allowedHeaders: readonly string[];
}

const OFF: CorsConfig = { enabled: false, allowedOrigins: [], allowedHeaders: [] };

export class CorsSettings {
  private loaded: CorsConfig | undefined;
  /** Bumped by every change and reset, so a load that raced one is not kept. */
  private generation = 0;
  private readonly mutation = new SerialQueue();

  constructor(private readonly storage: Storage) {}

  /** The cached setting; undefined until read after an unseal (or after another node changed it). */
  cached(): CorsConfig | undefined {
    return this.loaded;
  }

  async get(): Promise<CorsConfig> {
    if (this.loaded) return this.loaded;
    const generation = this.generation;
    const raw = await this.storage.get(CORS_CONFIG_KEY);
    const config = raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as CorsConfig) : OFF;
    if (generation === this.generation) this.loaded = config;
    return config;
  }

  /** Forgets the cached setting (seal, or another node changed it). */
  reset(): void {
    this.generation++;
    this.loaded = undefined;
  }

  /** Turns CORS on for `origins` (or off); 400 for an empty list or a wildcard among other origins, as Vault. */
  async set(enabled: boolean, origins: readonly string[], headers: readonly string[]): Promise<void> {
    if (enabled && origins.length === 0) throw new BadRequestError('allowed_origins: at least one origin or the wildcard "*" must be provided');
    if (origins.includes('*') && origins.length > 1) throw new BadRequestError('allowed_origins: to allow every origin, "*" must be the only value');
    const allowedHeaders = [...STANDARD_HEADERS];
    for (const header of headers) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header)) throw new BadRequestError(`allowed_headers: "${header}" is not a header name`);
      if (!allowedHeaders.some((known) => known.toLowerCase() === header.toLowerCase())) allowedHeaders.push(header);
    }
    await this.store(enabled ? { enabled, allowedOrigins: [...origins], allowedHeaders } : OFF);
  }

  async disable(): Promise<void> {
    await this.store(OFF);
  }

  private store(config: CorsConfig): Promise<void> {
    return this.mutation.run(async () => {
      this.generation++;
      await this.storage.put(CORS_CONFIG_KEY, Buffer.from(JSON.stringify(config), 'utf8'));
      this.loaded = config;
    });
  }
}

/** What the HTTP layer does with a request carrying `Origin`. */
export type CorsAnswer =
  | { readonly kind: 'refuse' }
  | { readonly kind: 'preflight'; readonly headers: Record<string, string> }
  | { readonly kind: 'pass'; readonly headers: Record<string, string> };

/** Vault's check: the wildcard alone allows every origin, otherwise an exact match. */
export function corsAnswer(config: CorsConfig, origin: string, method: string, requestMethod: string | undefined): CorsAnswer | 'method-not-allowed' {
  const allowed = config.allowedOrigins.length === 1 && config.allowedOrigins[0] === '*' ? true : config.allowedOrigins.includes(origin);
  if (!allowed) return { kind: 'refuse' };
  const headers = { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
  if (method !== 'OPTIONS') return { kind: 'pass', headers };
  if (requestMethod !== undefined && !(CORS_METHODS as readonly string[]).includes(requestMethod.toUpperCase())) return 'method-not-allowed';
  return {
    kind: 'preflight',
    headers: {
      ...headers,
      'Access-Control-Allow-Methods': CORS_METHODS.join(','),
      'Access-Control-Allow-Headers': config.allowedHeaders.join(','),
      'Access-Control-Max-Age': '300',
    },
  };
}
