/**
 * The mount's configuration: where the keys that sign tokens come from (exactly one of
 * `jwt_validation_pubkeys`, `jwks_url` or `oidc_discovery_url`), which algorithms and issuer are
 * accepted, and the OIDC client of the authorization-code flow. Stored as JSON under `config`.
 */
import type { Storage } from '../../sdk/index.js';
import { STORAGE_KEYS, readJson, writeJson } from './storage.js';

/** Storage layout version of the config entry; bump with an upgrade step when the layout changes. */
export const CONFIG_STORAGE_VERSION = 1;

export interface JwtConfig {
  version: number;
  oidc_discovery_url: string;
  oidc_discovery_ca_pem: string;
  oidc_client_id: string;
  /** Never returned by a read. */
  oidc_client_secret: string;
  oidc_response_mode: string;
  oidc_response_types: string[];
  jwks_url: string;
  jwks_ca_pem: string;
  jwt_validation_pubkeys: string[];
  jwt_supported_algs: string[];
  bound_issuer: string;
  default_role: string;
  override_allowed_server_names: string[];
}

/**
 * The asymmetric JWS algorithms a token may be signed with (RFC 7518 §3.1 and RFC 8037): never
 * `none`, never an HMAC (a verifier holding only public keys would otherwise accept a token
 * "signed" with the public key itself as the HMAC secret).
 */
export const SUPPORTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'EdDSA'] as const;

/** Where the verification keys come from. */
export type KeySource = 'static' | 'jwks' | 'discovery';

export function keySourceOf(config: JwtConfig): KeySource {
  if (config.jwt_validation_pubkeys.length > 0) return 'static';
  if (config.jwks_url !== '') return 'jwks';
  return 'discovery';
}

/** Whether the mount can run the OIDC authorization-code flow: discovery and a client. */
export function isOidcFlow(config: JwtConfig): boolean {
  return config.oidc_discovery_url !== '' && config.oidc_client_id !== '' && config.oidc_client_secret !== '';
}

/**
 * The algorithms a token may use: the configured ones, or every supported one for a JWT login and
 * RS256 for an ID token of the OIDC flow (what OIDC Core §3.1.3.7 makes the default).
 */
export function acceptedAlgorithms(config: JwtConfig, forIdToken: boolean): string[] {
  if (config.jwt_supported_algs.length > 0) return config.jwt_supported_algs;
  return forIdToken ? ['RS256'] : [...SUPPORTED_ALGORITHMS];
}

export function readConfig(storage: Storage): Promise<JwtConfig | undefined> {
  return readJson<JwtConfig>(storage, STORAGE_KEYS.config);
}

export function writeConfig(storage: Storage, config: JwtConfig): Promise<void> {
  return writeJson(storage, STORAGE_KEYS.config, config);
}

/** A config read: everything but the client secret. */
export function configResponse(config: JwtConfig): Record<string, unknown> {
  return {
    oidc_discovery_url: config.oidc_discovery_url,
    oidc_discovery_ca_pem: config.oidc_discovery_ca_pem,
    oidc_client_id: config.oidc_client_id,
    oidc_response_mode: config.oidc_response_mode,
    oidc_response_types: config.oidc_response_types,
    jwks_url: config.jwks_url,
    jwks_ca_pem: config.jwks_ca_pem,
    jwt_validation_pubkeys: config.jwt_validation_pubkeys,
    jwt_supported_algs: config.jwt_supported_algs,
    bound_issuer: config.bound_issuer,
    default_role: config.default_role,
    override_allowed_server_names: config.override_allowed_server_names,
    provider_config: {},
  };
}
