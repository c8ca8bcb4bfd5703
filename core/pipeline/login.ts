/**
 * Stage 9, mint login token: an auth method answers a login with an auth result (policies, TTLs,
 * alias, group aliases); this stage resolves the identity alias, brings the entity's external
 * group memberships on this mount in line with the group aliases, and issues the token, with TTLs
 * from the result, the mount's tune and the system defaults. Only auth mounts may answer with an
 * auth result.
 */
import type { IdentityStore } from '../auth/identity/identity-store.js';
import { authBlock, issueToken, type TokenIssuer } from '../auth/token/issue.js';
import { issuedTokenType } from '../auth/token/token-type.js';
import type { AuthResult, LogicalResponse } from '../framework/request.js';
import type { Unsealed } from '../unsealed.js';
import type { Route } from './types.js';

/** What a login's alias resolves to: its entity, whose external groups follow the login's group aliases. */
export type AliasResolver = Pick<IdentityStore, 'resolveAlias' | 'syncExternalGroups'>;

export class LoginStage {
  constructor(
    private readonly tokens: TokenIssuer,
    private readonly identity: AliasResolver,
    private readonly unsealed: Pick<Unsealed, 'mounts'>,
  ) {}

  /** A response carrying a login's auth result gets its token; any other passes unchanged. */
  async mint(route: Route, path: string, response: LogicalResponse | null): Promise<LogicalResponse | null> {
    if (!response?.auth) return response;
    const live = route.live;
    if (!live || live.entry.table !== 'auth') throw new Error('only auth methods may return an auth result');
    const minted = await this.issue(route, path, response.auth);
    const warnings = [...(response.warnings ?? []), ...minted.warnings];
    const { warnings: _previous, ...rest } = response;
    return { ...rest, auth: undefined, tokenAuth: minted.block, ...(warnings.length > 0 ? { warnings } : {}) };
  }

  private async issue(route: Route, path: string, result: AuthResult): Promise<{ block: Record<string, unknown>; warnings: string[] }> {
    const live = route.live!;
    const entry = live.entry;
    const view = this.unsealed.mounts.systemViewFor(live);
    let entityId = '';
    if (result.alias) {
      const resolved = await this.identity.resolveAlias({
        mountAccessor: entry.accessor,
        mountType: entry.type,
        mountPath: live.routePrefix,
        name: result.alias.name,
        ...(result.alias.metadata ? { metadata: result.alias.metadata } : {}),
      });
      entityId = resolved.entityId;
      // As in Vault, every login sets the entity's external groups on this mount: a group the
      // identity provider no longer lists is left.
      await this.identity.syncExternalGroups(entityId, entry.accessor, (result.groupAliases ?? []).map((g) => g.name));
    }
    const type = issuedTokenType(entry.config.token_type, result.tokenType ?? 'default');
    const prefix = entry.path.replace(/\/$/, '').replace(/\//g, '-');
    const issued = await issueToken(this.tokens, {
      policies: result.policies,
      noDefaultPolicy: result.noDefaultPolicy ?? false,
      meta: result.metadata ?? null,
      displayName: result.displayName ? `${prefix}-${result.displayName}` : prefix,
      numUses: result.numUses ?? 0,
      ttl: result.ttl ?? 0,
      explicitMaxTtl: result.explicitMaxTtl ?? 0,
      period: result.period ?? 0,
      roleMaxTtl: result.maxTtl ?? 0,
      renewable: result.renewable ?? true,
      type,
      boundCidrs: result.boundCidrs ?? [],
      entityId,
      role: '',
      path,
      parent: undefined,
      origin: {
        mountAccessor: entry.accessor,
        mountPath: live.routePrefix,
        policies: result.policies,
        ...(result.internalData ? { internalData: result.internalData } : {}),
        ...(result.metadata ? { metadata: result.metadata } : {}),
        ...(result.displayName ? { displayName: result.displayName } : {}),
      },
      mountDefault: view.defaultLeaseTtl(),
      mountMax: view.maxLeaseTtl(),
    });
    return { block: authBlock(issued.id, issued.entry), warnings: issued.warnings };
  }
}
