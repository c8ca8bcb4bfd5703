/** What the token store's paths need from the host. */
import type { Storage } from '../../../storage/storage.js';
import type { LogicalRequest, MountRef } from '../../framework/request.js';
import type { ResolvedToken, TokenEntry, TokenStore } from '../token-store.js';
import { PermissionDeniedError } from '../../errors.js';

export interface TokenDeps {
  readonly store: TokenStore;
  /** Where roles are kept (behind the barrier). */
  readonly storage: Storage;
  /** Effective TTLs of the token/ mount. */
  mountTtls(): { defaultTtl: number; maxTtl: number };
  policyExists(name: string): Promise<boolean>;
  /** The policies a token's entity and its groups add to the token's own. */
  identityPolicies(entityId: string): Promise<string[]>;
  /** The entity behind an alias on the token mount, found or created (`entity_alias` on a role). */
  entityForAlias(name: string, mount: MountRef): Promise<string>;
  /** Renews a token, asking the auth method that issued it when there is one. */
  renew(token: ResolvedToken, increment: number, req: LogicalRequest): Promise<{ entry: TokenEntry; warnings: string[] }>;
}

/** The caller's own token; the host has already checked it, so absence is a permission problem. */
export async function callerToken(services: TokenDeps, req: LogicalRequest): Promise<ResolvedToken> {
  const token = req.clientToken ? await services.store.lookup(req.clientToken) : undefined;
  if (!token) throw new PermissionDeniedError();
  return token;
}
