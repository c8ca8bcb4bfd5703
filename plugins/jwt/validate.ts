/**
 * Whether a token may log in: its size, its algorithm, its signature, then the registered claims
 * (RFC 7519 §4.1) against what the configuration and role expect, with Vault's leeway rules and
 * error texts (those of the JWT library Vault validates with, github.com/hashicorp/cap/jwt).
 */
import { decodeProtectedHeader } from 'jose';
import { KeysUnavailableError, SignatureError, type TokenKeys } from './keys.js';
import { DEFAULT_LEEWAY } from './role.js';

/**
 * The longest token accepted, in characters: far above what identity providers issue (a few
 * kilobytes with many groups), and low enough that a client cannot make the server hash and parse
 * megabytes per login.
 */
export const MAX_TOKEN_LENGTH = 64 * 1024;

/** A token that must not log in; the message says why, in Vault's words. */
export class TokenInvalidError extends Error {}

export type Claims = Record<string, unknown>;

export interface TokenBounds {
  /** `iss` must equal it; empty: not checked. */
  readonly issuer: string;
  /** `sub` must equal it; empty: not checked. */
  readonly subject: string;
  /** `aud` must hold one of them; empty: not checked. */
  readonly audiences: readonly string[];
  readonly algorithms: readonly string[];
  /** Seconds; 0 takes the default, a negative value none. */
  readonly expirationLeeway: number;
  readonly notBeforeLeeway: number;
  readonly clockSkewLeeway: number;
  readonly now: Date;
}

/** The token's claims once it verifies and meets `bounds`; a TokenInvalidError or KeysUnavailableError otherwise. */
export async function validateToken(keys: TokenKeys, token: string, bounds: TokenBounds): Promise<Claims> {
  if (token.length > MAX_TOKEN_LENGTH) throw new TokenInvalidError(`the token is ${token.length} characters long, more than the ${MAX_TOKEN_LENGTH} accepted`);
  const malformed = new TokenInvalidError('error verifying token signature: compact JWS format must have three parts and a JSON header');
  if (token.split('.').length !== 3) throw malformed;
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    throw malformed;
  }
  // Checked before any key is touched: `none` and the HMACs are never in the list.
  if (typeof alg !== 'string' || !bounds.algorithms.includes(alg)) {
    throw new TokenInvalidError('invalid algorithm (alg) header parameter: token signed with unexpected algorithm');
  }
  let payload: Uint8Array;
  try {
    payload = await keys.verify(token, bounds.algorithms);
  } catch (err) {
    if (err instanceof SignatureError) throw new TokenInvalidError(`error verifying token signature: ${err.message}`);
    throw err instanceof KeysUnavailableError ? err : new KeysUnavailableError(String(err));
  }
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload).toString('utf8'));
  } catch {
    claims = undefined;
  }
  if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) throw new TokenInvalidError('error verifying token signature: the claims are not a JSON object');
  checkClaims(claims as Claims, bounds);
  return claims as Claims;
}

/** The registered claims against `bounds`, in the order Vault checks them. */
export function checkClaims(claims: Claims, bounds: TokenBounds): void {
  if (bounds.issuer !== '' && claims.iss !== bounds.issuer) throw new TokenInvalidError('invalid issuer (iss) claim');
  if (bounds.subject !== '' && claims.sub !== bounds.subject) throw new TokenInvalidError('invalid subject (sub) claim');
  const audiences = audiencesOf(claims);
  if (bounds.audiences.length > 0 && !bounds.audiences.some((a) => audiences.includes(a))) {
    throw new TokenInvalidError('invalid audience (aud) claim: audience claim does not match any expected audience');
  }

  const iat = numericDate(claims, 'iat');
  let exp = numericDate(claims, 'exp');
  let nbf = numericDate(claims, 'nbf');
  if (iat === 0 && exp === 0 && nbf === 0) throw new TokenInvalidError('no issued at (iat), not before (nbf), or expiration time (exp) claims in token');
  // A token without `exp` lives for the expiration leeway from its start; one without `nbf`
  // starts at `iat`, or one not-before leeway before its expiry.
  if (exp === 0) exp = Math.max(iat, nbf) + leeway(bounds.expirationLeeway, DEFAULT_LEEWAY.expiration);
  if (nbf === 0) nbf = iat !== 0 ? iat : exp - leeway(bounds.notBeforeLeeway, DEFAULT_LEEWAY.notBefore);
  const skew = leeway(bounds.clockSkewLeeway, DEFAULT_LEEWAY.clockSkew);
  const now = Math.floor(bounds.now.getTime() / 1000);
  if (now + skew < nbf) throw new TokenInvalidError('invalid not before (nbf) claim: token not yet valid');
  if (now - skew > exp) throw new TokenInvalidError('invalid expiration time (exp) claim: token is expired');
  if (iat !== 0 && now + skew < iat) throw new TokenInvalidError('invalid issued at (iat) claim: token issued in the future');
}

/** `aud` as a list (RFC 7519 §4.1.3 allows one string). */
export function audiencesOf(claims: Claims): string[] {
  const aud = claims.aud;
  if (aud === undefined || aud === null) return [];
  if (typeof aud === 'string') return [aud];
  if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) return aud;
  throw new TokenInvalidError('invalid audience (aud) claim: not a string or a list of strings');
}

/** A NumericDate claim in whole seconds (fractions dropped, as Go reads them); 0 when absent. */
function numericDate(claims: Claims, name: 'iat' | 'exp' | 'nbf'): number {
  const value = claims[name];
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new TokenInvalidError(`invalid ${name} claim: not a number`);
  return Math.trunc(value);
}

/** A leeway setting in seconds: 0 is the default, negative is none. */
function leeway(setting: number, fallback: number): number {
  if (setting < 0) return 0;
  return setting === 0 ? fallback : setting;
}
