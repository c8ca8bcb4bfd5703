/**
 * OIDC logins in progress: from `oidc/auth_url`, which hands the browser to the provider, to
 * `oidc/callback`, which the provider's redirect brings back with the same `state`. Each entry
 * holds what only the server may know: the PKCE code verifier (RFC 7636) and the nonce the ID
 * token must carry. Kept in memory, as Vault does, for PENDING_LOGIN_TTL_MS; a state is taken
 * once. `oidc/auth_url` needs no token, so the number kept is bounded: past MAX_PENDING_LOGINS
 * the oldest is dropped (its user starts again), and memory stays bounded whatever clients send.
 */
import type { Clock } from '../../sdk/index.js';

export const PENDING_LOGIN_TTL_MS = 10 * 60_000;
export const MAX_PENDING_LOGINS = 10_000;

export interface PendingLogin {
  readonly role: string;
  readonly redirectUri: string;
  readonly nonce: string;
  readonly codeVerifier: string;
  /** The CLI's own nonce (`client_nonce`): the callback must present it again. */
  readonly clientNonce: string;
}

export class PendingLogins {
  /** By state, oldest first (a Map keeps insertion order). */
  private readonly entries = new Map<string, PendingLogin & { readonly expires: number }>();

  constructor(private readonly clock: Clock) {}

  add(state: string, login: PendingLogin): void {
    const now = this.clock.now().getTime();
    for (const [key, entry] of this.entries) {
      if (entry.expires > now && this.entries.size < MAX_PENDING_LOGINS) break;
      this.entries.delete(key);
    }
    this.entries.set(state, { ...login, expires: now + PENDING_LOGIN_TTL_MS });
  }

  /** The login of `state`, removed so it cannot be completed twice; undefined if unknown or expired. */
  take(state: string): PendingLogin | undefined {
    const entry = this.entries.get(state);
    if (!entry) return undefined;
    this.entries.delete(state);
    return entry.expires > this.clock.now().getTime() ? entry : undefined;
  }

  get size(): number {
    return this.entries.size;
  }
}
