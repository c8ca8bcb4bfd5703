/**
 * Stage 6, authorize: the caller's policies must grant the prepared operation on the full path
 * (and sudo where the path needs it); then one use of a limited-use token is spent. A token on its
 * last use is revoked once the request is done (`TokenUse.finish`).
 *
 * When the token's ACL is at hand (root, or built before for its policies) and it has no uses to
 * spend, the decision is made at once, without a turn of the event loop.
 */
import { PermissionDeniedError } from '../errors.js';
import type { PreparedRequest } from '../framework/backend.js';
import type { RequestAuth } from '../framework/request.js';
import type { ResolvedToken, TokenStore } from '../auth/token-store.js';
import type { TokenAcls } from '../auth/token-acls.js';
import type { ACL } from '../auth/policy/acl.js';
import type { RequestAudit } from './audit.js';
import type { ReadRequest } from './types.js';

/** What authorizing spent: `finish` revokes a token whose last use this was. */
export interface TokenUse {
  finish(): Promise<void>;
}

/** Authorized; undefined when nothing is to be done after the request. */
type Authorized = TokenUse | undefined;

export class AuthorizeStage {
  constructor(
    private readonly tokens: TokenStore,
    private readonly acls: TokenAcls,
  ) {}

  authorize(request: ReadRequest, caller: ResolvedToken, auth: RequestAuth, prepared: PreparedRequest, audit: RequestAudit): Authorized | Promise<Authorized> {
    const acl = this.acls.cachedAclFor(caller.entry);
    if (!acl || this.tokens.spendsUse(caller)) return this.authorizeLater(request, caller, auth, prepared, audit, acl);
    return this.allows(acl, request, auth, prepared) ? undefined : this.refuse(audit);
  }

  private async authorizeLater(
    request: ReadRequest,
    caller: ResolvedToken,
    auth: RequestAuth,
    prepared: PreparedRequest,
    audit: RequestAudit,
    cached: ACL | undefined,
  ): Promise<Authorized> {
    const acl = cached ?? (await this.acls.aclFor(caller.entry));
    if (!this.allows(acl, request, auth, prepared)) return this.refuse(audit);
    const use = await this.tokens.use(caller);
    if (!use.allowed) throw new PermissionDeniedError();
    return use.last ? { finish: () => this.tokens.revokeTree(caller.hash) } : undefined;
  }

  /**
   * On a path reachable without a token that honours sudo (PathDefinition.sudo): a caller whose
   * policy grants the operation with sudo is authorized, a use of its token spent, and `auth.sudo`
   * set; any other caller goes on as it came, nothing spent.
   */
  authorizeSudo(request: ReadRequest, caller: ResolvedToken | undefined, auth: RequestAuth | undefined, prepared: PreparedRequest): Authorized | Promise<Authorized> {
    if (!caller || !auth || !prepared.sudo) return undefined;
    return this.grantSudo(request, caller, auth, prepared);
  }

  private async grantSudo(request: ReadRequest, caller: ResolvedToken, auth: RequestAuth, prepared: PreparedRequest): Promise<Authorized> {
    const acl = this.acls.cachedAclFor(caller.entry) ?? (await this.acls.aclFor(caller.entry));
    const decision = acl.allowOperation({ path: request.path, operation: prepared.operation, data: request.data, wrapTtl: request.wrapTtl });
    if (!decision.allowed || !decision.sudo) return undefined;
    const use = await this.tokens.use(caller);
    if (!use.allowed) return undefined;
    auth.sudo = true;
    return use.last ? { finish: () => this.tokens.revokeTree(caller.hash) } : undefined;
  }

  /**
   * Whether the ACL grants the operation (and sudo where needed); sets `auth.sudo` when it does. A
   * path any token may run is allowed here: its handler checks the caller's ACL itself.
   */
  private allows(acl: ACL, request: ReadRequest, auth: RequestAuth, prepared: PreparedRequest): boolean {
    if (prepared.anyToken) return true;
    const decision = acl.allowOperation({ path: request.path, operation: prepared.operation, data: request.data, wrapTtl: request.wrapTtl });
    if (!decision.allowed || (prepared.sudo && !decision.sudo)) return false;
    auth.sudo = decision.sudo;
    return true;
  }

  private async refuse(audit: RequestAudit): Promise<never> {
    const error = new PermissionDeniedError('permission denied');
    await audit.refused(error);
    throw error;
  }
}
