/**
 * The OIDC authorization-code flow (OpenID Connect Core 1.0 §3.1) with PKCE (RFC 7636, S256):
 * the authorization URL the browser is sent to, the exchange of the code it brings back for an
 * ID token at the provider's token endpoint, and the checks that ID token must pass.
 */
import { createHash, randomBytes } from 'node:crypto';
import { OutboundError, outboundRequest } from '../../sdk/index.js';
import { acceptedAlgorithms, type JwtConfig } from './config.js';
import { KeysUnavailableError, type ProviderMetadata, type TokenKeys } from './keys.js';
import type { PendingLogin } from './pending-logins.js';
import { DEFAULT_LEEWAY, type JwtRole } from './role.js';
import { TokenInvalidError, audiencesOf, validateToken, type Claims } from './validate.js';

/** The largest token endpoint answer accepted, in bytes. */
const MAX_TOKEN_RESPONSE_BYTES = 256 * 1024;

/** The provider refused the code (its OAuth error, RFC 6749 §5.2) or answered without an ID token. */
export class ExchangeError extends Error {}

/** An unguessable value for a state, a nonce or a code verifier: 256 random bits, base64url. */
export function randomValue(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Whether a redirect URI is one the role allows: exactly, or — for a loopback address — on any
 * port, since a native client (the CLI) listens on whatever port it gets (RFC 8252 §7.3).
 */
export function validRedirect(uri: string, allowed: readonly string[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return false;
  }
  if (!['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname)) return allowed.includes(uri);
  const portless = (url: URL) => {
    const copy = new URL(url.href);
    copy.port = '';
    return copy.href;
  };
  return allowed.some((candidate) => {
    try {
      return portless(new URL(candidate)) === portless(parsed);
    } catch {
      return false;
    }
  });
}

/** The provider's authorization URL for one login. */
export function authorizationUrl(provider: ProviderMetadata, config: JwtConfig, role: JwtRole, state: string, login: PendingLogin): string {
  if (!provider.authorization_endpoint) throw new KeysUnavailableError('the discovery document names no authorization_endpoint');
  const url = new URL(provider.authorization_endpoint);
  const scopes = ['openid', ...role.oidc_scopes.filter((s) => s !== 'openid')];
  url.searchParams.set('client_id', config.oidc_client_id);
  url.searchParams.set('redirect_uri', login.redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', scopes.join(' '));
  url.searchParams.set('state', state);
  url.searchParams.set('nonce', login.nonce);
  url.searchParams.set('code_challenge', createHash('sha256').update(login.codeVerifier).digest('base64url'));
  url.searchParams.set('code_challenge_method', 'S256');
  if (role.max_age > 0) url.searchParams.set('max_age', String(role.max_age));
  return url.href;
}

/** Trades the code for the ID token at the token endpoint; the client authenticates with its secret. */
export async function exchangeCode(provider: ProviderMetadata, config: JwtConfig, code: string, login: PendingLogin, timeoutMs: number): Promise<string> {
  if (!provider.token_endpoint) throw new KeysUnavailableError('the discovery document names no token_endpoint');
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: login.redirectUri, code_verifier: login.codeVerifier });
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' };
  // client_secret_basic unless the provider says it takes only client_secret_post (OIDC Core §9).
  const methods = provider.token_endpoint_auth_methods_supported;
  if (methods && methods.includes('client_secret_post') && !methods.includes('client_secret_basic')) {
    form.set('client_id', config.oidc_client_id);
    form.set('client_secret', config.oidc_client_secret);
  } else {
    const credentials = `${encodeURIComponent(config.oidc_client_id)}:${encodeURIComponent(config.oidc_client_secret)}`;
    headers.Authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
  }
  let res;
  try {
    res = await outboundRequest(provider.token_endpoint, {
      method: 'POST',
      headers,
      body: form.toString(),
      caPem: config.oidc_discovery_ca_pem,
      serverNames: config.override_allowed_server_names,
      timeoutMs,
      maxBytes: MAX_TOKEN_RESPONSE_BYTES,
    });
  } catch (err) {
    throw new KeysUnavailableError(err instanceof OutboundError ? err.message : String(err));
  }
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(res.body.toString('utf8'));
    if (parsed !== null && typeof parsed === 'object') body = parsed as Record<string, unknown>;
  } catch {
    // Judged by the status below.
  }
  if (res.status >= 500) throw new KeysUnavailableError(`the token endpoint answered ${res.status}`);
  if (res.status !== 200) {
    const reason = typeof body.error === 'string' ? body.error : `status ${res.status}`;
    const detail = typeof body.error_description === 'string' ? `: ${body.error_description}` : '';
    throw new ExchangeError(`${reason}${detail}`.slice(0, 300));
  }
  if (typeof body.id_token !== 'string' || body.id_token === '') throw new ExchangeError('the token endpoint answered no id_token');
  return body.id_token;
}

/**
 * The ID token's claims once it passes OIDC Core §3.1.3.7: signed by the provider's keys, issued
 * by it, for this client (and, when the role binds audiences, for one of them), with the nonce of
 * this login, within its validity period and the role's max_age.
 */
export async function checkIdToken(keys: TokenKeys, provider: ProviderMetadata, idToken: string, role: JwtRole, login: PendingLogin, now: Date): Promise<Claims> {
  const config = keys.config;
  const claims = await validateToken(keys, idToken, {
    issuer: provider.issuer,
    subject: '',
    audiences: [config.oidc_client_id],
    algorithms: acceptedAlgorithms(config, true),
    expirationLeeway: role.expiration_leeway,
    notBeforeLeeway: role.not_before_leeway,
    clockSkewLeeway: role.clock_skew_leeway,
    now,
  });
  const audiences = audiencesOf(claims);
  if (role.bound_audiences.length > 0 && !role.bound_audiences.some((a) => audiences.includes(a))) {
    throw new TokenInvalidError('invalid audience (aud) claim: audience claim does not match any expected audience');
  }
  if (claims.azp !== undefined && claims.azp !== config.oidc_client_id) throw new TokenInvalidError('invalid authorized party (azp) claim');
  if (claims.nonce !== login.nonce) throw new TokenInvalidError('invalid ID token nonce.');
  if (role.max_age > 0) {
    const authTime = claims.auth_time;
    if (typeof authTime !== 'number') throw new TokenInvalidError('missing auth_time claim, required with max_age');
    const skew = role.clock_skew_leeway < 0 ? 0 : role.clock_skew_leeway || DEFAULT_LEEWAY.clockSkew;
    if (now.getTime() / 1000 - authTime > role.max_age + skew) throw new TokenInvalidError('auth_time claim is older than max_age');
  }
  const { nonce: _nonce, ...rest } = claims;
  return rest;
}
