/**
 * The service account a login's token names, read from its claims: the legacy secret-based token's
 * `kubernetes.io/serviceaccount/*` claims or a projected token's `kubernetes.io` object. With
 * `pem_keys` the signature is verified locally first (a forged token is refused without asking
 * the API server); either way the API server's TokenReview has the last word (token-review.ts).
 */
import type { KeyObject } from 'node:crypto';
import { compactVerify, decodeJwt, decodeProtectedHeader } from 'jose';
import { DEFAULT_ISSUER, type KubernetesConfig } from './config.js';
import type { KubernetesRole } from './role.js';

/** Longer than any service account token; a client cannot make the server parse megabytes per login. */
export const MAX_TOKEN_LENGTH = 64 * 1024;

/** The signing algorithms of service account tokens (RS256 by default; ES* with EC keys). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512'];

/** Leeways of the time claims, when a token has them (the defaults of the JWT library Vault uses). */
const LEEWAY = { missingBound: 150, clockSkew: 60 } as const;

/** A token that may not log in: a 403 whose message says why. */
export class TokenRefusedError extends Error {}

export interface ServiceAccount {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly secretName: string;
  readonly audiences: readonly string[];
}

type Claims = Record<string, unknown>;

/** The token's service account once its signature (with pem_keys), issuer, audience and times pass. */
export async function readServiceAccount(jwt: string, config: KubernetesConfig, role: KubernetesRole, keys: readonly KeyObject[], now: Date): Promise<ServiceAccount> {
  if (jwt.length > MAX_TOKEN_LENGTH) throw new TokenRefusedError(`the token is ${jwt.length} characters long, more than the ${MAX_TOKEN_LENGTH} accepted`);
  let claims: Claims;
  try {
    if (jwt.split('.').length !== 3) throw new Error('malformed');
    const alg = decodeProtectedHeader(jwt).alg;
    if (typeof alg !== 'string' || !ALGORITHMS.includes(alg)) throw new TokenRefusedError('invalid algorithm (alg) header parameter: token signed with unexpected algorithm');
    claims = decodeJwt(jwt) as Claims;
  } catch (err) {
    if (err instanceof TokenRefusedError) throw err;
    throw new TokenRefusedError('error verifying token signature: compact JWS format must have three parts and a JSON header');
  }
  if (keys.length > 0 && !(await verifiesWithAny(jwt, keys))) throw new TokenRefusedError('error verifying token signature: failed to verify id token signature');

  if (!config.disable_iss_validation && claims.iss !== (config.issuer || DEFAULT_ISSUER)) throw new TokenRefusedError('invalid issuer (iss) claim');
  const audiences = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((a): a is string => typeof a === 'string') : [];
  if (role.audience !== '' && !audiences.includes(role.audience)) {
    throw new TokenRefusedError('invalid audience (aud) claim: audience claim does not match any expected audience');
  }
  checkTimes(claims, now);

  const projected = objectAt(claims, 'kubernetes.io');
  const account = projected ? objectAt(projected, 'serviceaccount') : undefined;
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return {
    name: account ? text(account.name) : text(claims['kubernetes.io/serviceaccount/service-account.name']),
    namespace: projected ? text(projected.namespace) : text(claims['kubernetes.io/serviceaccount/namespace']),
    uid: account ? text(account.uid) : text(claims['kubernetes.io/serviceaccount/service-account.uid']),
    secretName: text(claims['kubernetes.io/serviceaccount/secret.name']),
    audiences,
  };
}

async function verifiesWithAny(jwt: string, keys: readonly KeyObject[]): Promise<boolean> {
  for (const key of keys) {
    try {
      await compactVerify(jwt, key, { algorithms: ALGORITHMS });
      return true;
    } catch {
      // The next key may be the one.
    }
  }
  return false;
}

/**
 * `exp`, `nbf` and `iat` when the token has any of them (legacy tokens have none): a missing end
 * or start is filled in from the others, and the clock may be off by a minute either way.
 */
function checkTimes(claims: Claims, now: Date): void {
  const seconds = (name: string) => (typeof claims[name] === 'number' ? Math.trunc(claims[name] as number) : 0);
  const iat = seconds('iat');
  let exp = seconds('exp');
  let nbf = seconds('nbf');
  if (iat === 0 && exp === 0 && nbf === 0) return;
  if (exp === 0) exp = Math.max(iat, nbf) + LEEWAY.missingBound;
  if (nbf === 0) nbf = iat !== 0 ? iat : exp - LEEWAY.missingBound;
  const at = Math.floor(now.getTime() / 1000);
  if (at + LEEWAY.clockSkew < nbf) throw new TokenRefusedError('invalid not before (nbf) claim: token not yet valid');
  if (at - LEEWAY.clockSkew > exp) throw new TokenRefusedError('invalid expiration time (exp) claim: token is expired');
  if (iat !== 0 && at + LEEWAY.clockSkew < iat) throw new TokenRefusedError('invalid issued at (iat) claim: token issued in the future');
}

function objectAt(value: Claims, key: string): Claims | undefined {
  const found = value[key];
  return found !== null && typeof found === 'object' && !Array.isArray(found) ? (found as Claims) : undefined;
}
