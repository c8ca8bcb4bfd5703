/** A token's ACL: its policies, with identity templating filled in from its entity and aliases. */
import type { ACL, IdentityContext } from './policy/acl.js';
import type { IdentityStore } from './identity/identity-store.js';
import type { PolicyStore } from './policy-store.js';
import type { TokenEntry } from './token-store.js';

export class TokenAcls {
  constructor(
    private readonly policies: PolicyStore,
    private readonly identity: IdentityStore,
  ) {}

  /**
   * The token's ACL when it is at hand without a turn of the event loop: a root token's, or one
   * built before for the same cached entry's policies; never for a token with an entity (its
   * aliases may have changed since). Undefined: ask `aclFor`.
   */
  cachedAclFor(entry: TokenEntry): ACL | undefined {
    if (entry.entityId && !entry.policies.includes('root')) return undefined;
    return this.policies.cachedAcl(entry.policies);
  }

  /** Takes a token entry or a request's `auth`: only the policies and the entity count. */
  async aclFor(entry: Pick<TokenEntry, 'policies' | 'entityId'>): Promise<ACL> {
    let identity: (IdentityContext & { key: string }) | undefined;
    if (entry.entityId && !entry.policies.includes('root')) {
      const context = await this.identity.context(entry.entityId);
      if (context) {
        identity = {
          key: `${context.entity.id}@${context.aliases.map((a) => a.last_update_time).join(',')}`,
          entityId: context.entity.id,
          entityName: context.entity.name,
          entityMetadata: { ...(context.entity.metadata ?? {}) },
          aliases: Object.fromEntries(
            context.aliases.map((a) => [a.mount_accessor, { id: a.id, name: a.name, metadata: { ...a.metadata } }]),
          ),
        };
      }
    }
    return this.policies.acl(entry.policies, identity);
  }
}
