/**
 * The keys tokens are verified with, from the one source the configuration names: PEM public keys
 * (`jwt_validation_pubkeys`), a JWKS document (`jwks_url`), or the `jwks_uri` of an OIDC
 * provider's discovery document (`oidc_discovery_url`). Signatures are checked by `jose`.
 *
 * Only URLs of the configuration (and the endpoints its discovery document names) are fetched,
 * never one a client supplies: a token's `iss` or `jku` is never followed. A fetched key set is
 * kept for KEYS_MAX_AGE_MS; a token whose `kid` it lacks makes it be fetched again, at most once
 * every REFETCH_COOLDOWN_MS, so a client sending made-up key ids cannot make the server fetch on
 * every login. Concurrent logins share one fetch.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { compactVerify, createLocalJWKSet, errors, type JSONWebKeySet } from 'jose';
import { OutboundError, UpstreamError, outboundRequest, type Clock } from '../../sdk/index.js';
import type { JwtConfig } from './config.js';

/** How long a fetched key set (or discovery document) is used before it is fetched again at the next login. */
export const KEYS_MAX_AGE_MS = 3600_000;
/** The shortest time between two fetches forced by an unknown `kid` or by a failed fetch. */
export const REFETCH_COOLDOWN_MS = 30_000;
/** The largest discovery document or key set accepted, in bytes. */
export const MAX_DOCUMENT_BYTES = 512 * 1024;
/** The most keys a key set may hold. */
export const MAX_KEYS = 100;

/** The provider could not be asked (unreachable, slow, failing, answering garbage): not the client's fault. */
export class KeysUnavailableError extends Error {}

/** A fetch that failed during a login, as the 502 the client sees. */
export function unavailable(prefix: string, err: KeysUnavailableError): UpstreamError {
  return new UpstreamError(`${prefix}could not fetch the provider's signing keys or metadata: ${err.message}`);
}

/** No key of the set verifies the token's signature (cap's wording, which Vault answers with). */
export class SignatureError extends Error {
  constructor() {
    super('failed to verify id token signature');
  }
}

/** What an OIDC provider's discovery document tells (OpenID Connect Discovery 1.0 §3). */
export interface ProviderMetadata {
  readonly issuer: string;
  readonly jwks_uri: string;
  readonly authorization_endpoint?: string;
  readonly token_endpoint?: string;
  readonly token_endpoint_auth_methods_supported?: readonly string[];
}

export interface FetchSettings {
  readonly clock: Clock;
  /** Timeout of one fetch, ms. */
  readonly timeoutMs: number;
}

/** The JSON document at `url`, or a KeysUnavailableError saying why not. */
export async function fetchJson(url: string, caPem: string, serverNames: readonly string[], timeoutMs: number): Promise<unknown> {
  let res;
  try {
    res = await outboundRequest(url, { caPem, serverNames, timeoutMs, maxBytes: MAX_DOCUMENT_BYTES, headers: { Accept: 'application/json' } });
  } catch (err) {
    throw new KeysUnavailableError(err instanceof OutboundError ? err.message : String(err));
  }
  if (res.status !== 200) throw new KeysUnavailableError(`${url} answered ${res.status}`);
  try {
    return JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new KeysUnavailableError(`${url} did not answer JSON`);
  }
}

/** Parses PEM public keys (or certificates, whose key is taken); the message names the bad one. */
export function parsePublicKeys(pems: readonly string[]): KeyObject[] {
  return pems.map((pem, i) => {
    try {
      const key = createPublicKey(pem);
      if (key.asymmetricKeyType !== 'rsa' && key.asymmetricKeyType !== 'rsa-pss' && key.asymmetricKeyType !== 'ec' && key.asymmetricKeyType !== 'ed25519') {
        throw new Error(`unsupported key type ${key.asymmetricKeyType}`);
      }
      return key;
    } catch (err) {
      throw new Error(`error parsing public key ${i + 1}: ${(err as Error).message}`);
    }
  });
}

/** A value that is fetched when first needed, kept for a while, and not fetched again too soon after a failure. */
class Fetched<T> {
  private value: { readonly data: T; readonly at: number } | undefined;
  private failure: { readonly error: Error; readonly at: number } | undefined;
  private inFlight: Promise<T> | undefined;

  constructor(
    private readonly load: () => Promise<T>,
    private readonly clock: Clock,
  ) {}

  /** The kept value while it is young enough, else a fresh one. */
  get(): Promise<T> {
    const now = this.clock.now().getTime();
    if (this.value && now - this.value.at < KEYS_MAX_AGE_MS) return Promise.resolve(this.value.data);
    return this.refresh();
  }

  /** A fresh value, unless one was fetched (or failed) within the cooldown: then what is kept. */
  refetch(): Promise<T> {
    const now = this.clock.now().getTime();
    if (this.value && now - this.value.at < REFETCH_COOLDOWN_MS) return Promise.resolve(this.value.data);
    return this.refresh();
  }

  private refresh(): Promise<T> {
    const now = this.clock.now().getTime();
    if (this.inFlight) return this.inFlight;
    if (this.failure && now - this.failure.at < REFETCH_COOLDOWN_MS) {
      return this.value ? Promise.resolve(this.value.data) : Promise.reject(this.failure.error);
    }
    const run = this.load().then(
      (data) => {
        this.value = { data, at: this.clock.now().getTime() };
        this.failure = undefined;
        return data;
      },
      (error: Error) => {
        this.failure = { error, at: this.clock.now().getTime() };
        throw error;
      },
    );
    this.inFlight = run.finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }
}

/** Checks a discovery document: the issuer must be the configured URL (OpenID Connect Discovery 1.0 §4.3). */
export function providerMetadata(doc: unknown, discoveryUrl: string): ProviderMetadata {
  if (doc === null || typeof doc !== 'object') throw new KeysUnavailableError('the discovery document is not a JSON object');
  const meta = doc as Record<string, unknown>;
  if (meta.issuer !== discoveryUrl) {
    throw new KeysUnavailableError(`issuer did not match the issuer returned by provider, expected "${discoveryUrl}" got "${String(meta.issuer)}"`);
  }
  if (typeof meta.jwks_uri !== 'string' || meta.jwks_uri === '') throw new KeysUnavailableError('the discovery document names no jwks_uri');
  const text = (name: string) => (typeof meta[name] === 'string' ? (meta[name] as string) : undefined);
  const methods = meta.token_endpoint_auth_methods_supported;
  return {
    issuer: meta.issuer,
    jwks_uri: meta.jwks_uri,
    ...(text('authorization_endpoint') ? { authorization_endpoint: text('authorization_endpoint')! } : {}),
    ...(text('token_endpoint') ? { token_endpoint: text('token_endpoint')! } : {}),
    ...(Array.isArray(methods) ? { token_endpoint_auth_methods_supported: methods.filter((m): m is string => typeof m === 'string') } : {}),
  };
}

/** Checks a key set document and prepares it for verification. */
function keySet(doc: unknown): ReturnType<typeof createLocalJWKSet> {
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new KeysUnavailableError('the key set has no "keys" list');
  if (keys.length > MAX_KEYS) throw new KeysUnavailableError(`the key set holds ${keys.length} keys, more than the ${MAX_KEYS} accepted`);
  try {
    return createLocalJWKSet(doc as JSONWebKeySet);
  } catch (err) {
    throw new KeysUnavailableError(`the key set is malformed: ${(err as Error).message}`);
  }
}

/**
 * The verification keys of one configuration. Built when the configuration is first needed and
 * dropped when it changes, so nothing fetched for an old configuration is used for a new one.
 */
export class TokenKeys {
  private readonly staticKeys: readonly KeyObject[];
  private readonly discovery: Fetched<ProviderMetadata> | undefined;
  private readonly remote: Fetched<ReturnType<typeof createLocalJWKSet>> | undefined;

  constructor(
    readonly config: JwtConfig,
    settings: FetchSettings,
  ) {
    this.staticKeys = parsePublicKeys(config.jwt_validation_pubkeys);
    const names = config.override_allowed_server_names;
    if (config.oidc_discovery_url !== '') {
      const url = config.oidc_discovery_url;
      const discovery = new Fetched(
        async () => providerMetadata(await fetchJson(`${url.replace(/\/+$/, '')}/.well-known/openid-configuration`, config.oidc_discovery_ca_pem, names, settings.timeoutMs), url),
        settings.clock,
      );
      this.discovery = discovery;
      this.remote = new Fetched(async () => keySet(await fetchJson((await discovery.get()).jwks_uri, config.oidc_discovery_ca_pem, names, settings.timeoutMs)), settings.clock);
    } else if (config.jwks_url !== '') {
      this.remote = new Fetched(async () => keySet(await fetchJson(config.jwks_url, config.jwks_ca_pem, names, settings.timeoutMs)), settings.clock);
    }
  }

  /** The provider's discovery document (OIDC configurations only). */
  provider(): Promise<ProviderMetadata> {
    if (!this.discovery) return Promise.reject(new KeysUnavailableError('no oidc_discovery_url is configured'));
    return this.discovery.get();
  }

  /** Fetches the remote key set now (a configuration check); the static keys need nothing. */
  async check(): Promise<void> {
    if (this.remote) await this.remote.get();
  }

  /**
   * The token's payload once its signature verifies with one of the keys under one of `algorithms`.
   * Throws SignatureError when none does, KeysUnavailableError when the keys could not be fetched.
   */
  async verify(token: string, algorithms: readonly string[]): Promise<Uint8Array> {
    const options = { algorithms: [...algorithms] };
    if (!this.remote) {
      for (const key of this.staticKeys) {
        try {
          return (await compactVerify(token, key, options)).payload;
        } catch {
          // The next key may be the one.
        }
      }
      throw new SignatureError();
    }
    let keys = await this.remote.get();
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        return (await compactVerify(token, keys, options)).payload;
      } catch (err) {
        if (err instanceof errors.JWKSMultipleMatchingKeys) {
          for await (const key of err) {
            try {
              return (await compactVerify(token, key, options)).payload;
            } catch {
              // The next candidate may be the one.
            }
          }
          throw new SignatureError();
        }
        // A key id the set lacks: the provider may have rotated its keys since they were fetched.
        if (!(err instanceof errors.JWKSNoMatchingKey) || attempt > 0) throw new SignatureError();
        const again = await this.remote.refetch();
        if (again === keys) throw new SignatureError();
        keys = again;
      }
    }
    throw new SignatureError();
  }
}
