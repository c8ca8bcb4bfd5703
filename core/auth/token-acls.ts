/**
 * A token's ACL: its own policies and its entity's identity policies (the entity's and those of
 * every group it is in, transitively: core/auth/identity/resolve.ts), with identity templating
 * filled in from its entity and aliases. A token whose entity is disabled is refused.
 */
import { PermissionDeniedError } from '../errors.js';
import type { ACL, IdentityContext } from './policy/acl.js';
import type { IdentityStore } from './identity/identity-store.js';
import { identityPolicies } from './identity/resolve.js';
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
   * policies, groups, aliases or disabled flag may have changed since). Undefined: ask `aclFor`.
   */
  cachedAclFor(entry: TokenEntry): ACL | undefined {
    if (entry.entityId && !entry.policies.includes('root')) return undefined;
    return this.policies.cachedAcl(entry.policies);
  }

  /**
   * Takes a token entry or a request's `auth`: only the policies and the entity count.
   * @throws PermissionDeniedError when the token's entity is disabled (Vault refuses its tokens
   *   at every use until it is enabled again).
   */
  async aclFor(entry: Pick<TokenEntry, 'policies' | 'entityId'>): Promise<ACL> {
    if (!entry.entityId || entry.policies.includes('root')) return this.policies.acl(entry.policies);
    const { entity, groups, policies } = await identityPolicies(this.identity, entry.entityId);
    if (!entity) return this.policies.acl(entry.policies);
    if (entity.disabled) throw new PermissionDeniedError();
    const aliases = await this.identity.aliasesOf(entity);
    const identity: IdentityContext & { key: string } = {
      // Whatever templates read: a change to any of it builds a new ACL.
      key: [entity.id, entity.last_update_time, ...aliases.map((a) => a.last_update_time), ...groups.map((g) => `${g.id}:${g.last_update_time}`)].join('@'),
      entityId: entity.id,
      entityName: entity.name,
      entityMetadata: { ...(entity.metadata ?? {}) },
      aliases: Object.fromEntries(aliases.map((a) => [a.mount_accessor, { id: a.id, name: a.name, metadata: { ...a.metadata }, customMetadata: { ...(a.custom_metadata ?? {}) } }])),
      groups: groups.map((g) => ({ id: g.id, name: g.name, metadata: { ...(g.metadata ?? {}) } })),
    };
    return this.policies.acl([...new Set([...entry.policies, ...policies])], identity);
  }
}
