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
import type { ResolvedToken, TokenEntry, TokenStore } from '../auth/token-store.js';
import type { ACL } from '../auth/policy/acl.js';
import type { RequestAudit } from './audit.js';
import type { ReadRequest } from './types.js';

/** Spending a limited-use token's uses, and revoking it after its last. */
export type TokenUses = Pick<TokenStore, 'spendsUse' | 'use' | 'revokeTree'>;

/** What authorization asks of a token's ACL. */
export type AclDecider = Pick<ACL, 'allowOperation'>;

/** A token's ACL: at hand (or undefined when it must be built), or built. */
export interface AclSource {
  cachedAclFor(entry: TokenEntry): AclDecider | undefined;
  /** @throws PermissionDeniedError when the token is refused whatever it asks (its entity is disabled). */
  aclFor(entry: TokenEntry): Promise<AclDecider>;
}

/** What authorizing spent: `finish` revokes a token whose last use this was. */
export interface TokenUse {
  finish(): Promise<void>;
}

/** What authorization decided: whether the caller holds sudo on the path, and what is left to do once the request is done. */
export interface Authorized {
  readonly sudo: boolean;
  readonly use?: TokenUse;
}

/** The two answers that spend nothing, shared by every request. */
const WITHOUT_SUDO: Authorized = Object.freeze({ sudo: false });
const WITH_SUDO: Authorized = Object.freeze({ sudo: true });

export class AuthorizeStage {
  constructor(
    private readonly tokens: TokenUses,
    private readonly acls: AclSource,
  ) {}

  authorize(request: ReadRequest, caller: ResolvedToken, prepared: PreparedRequest, audit: RequestAudit): Authorized | Promise<Authorized> {
    const acl = this.acls.cachedAclFor(caller.entry);
    if (!acl || this.tokens.spendsUse(caller)) return this.authorizeLater(request, caller, prepared, audit, acl);
    const sudo = this.allows(acl, request, prepared);
    return sudo === undefined ? this.refuse(audit) : sudo ? WITH_SUDO : WITHOUT_SUDO;
  }

  private async authorizeLater(request: ReadRequest, caller: ResolvedToken, prepared: PreparedRequest, audit: RequestAudit, cached: AclDecider | undefined): Promise<Authorized> {
    let acl = cached;
    try {
      acl ??= await this.acls.aclFor(caller.entry);
    } catch (err) {
      // A token refused outright (its entity is disabled) is a refusal the audit log records.
      if (err instanceof PermissionDeniedError) return this.refuse(audit);
      throw err;
    }
    const sudo = this.allows(acl, request, prepared);
    if (sudo === undefined) return this.refuse(audit);
    const use = await this.tokens.use(caller);
    if (!use.allowed) throw new PermissionDeniedError();
    return use.last ? { sudo, use: { finish: () => this.tokens.revokeTree(caller.hash) } } : sudo ? WITH_SUDO : WITHOUT_SUDO;
  }

  /**
   * On a path reachable without a token that honours sudo (PathDefinition.sudo): a caller whose
   * policy grants the operation with sudo is authorized, a use of its token spent, and its handler
   * sees `auth.sudo`; any other caller goes on as it came, nothing spent.
   */
  authorizeSudo(request: ReadRequest, caller: ResolvedToken | undefined, prepared: PreparedRequest): Authorized | Promise<Authorized> {
    if (!caller || !prepared.sudo) return WITHOUT_SUDO;
    return this.grantSudo(request, caller, prepared);
  }

  private async grantSudo(request: ReadRequest, caller: ResolvedToken, prepared: PreparedRequest): Promise<Authorized> {
    const acl = this.acls.cachedAclFor(caller.entry) ?? (await this.acls.aclFor(caller.entry));
    const decision = acl.allowOperation({ path: request.path, operation: prepared.operation, data: request.data, wrapTtl: request.wrapTtl });
    if (!decision.allowed || !decision.sudo) return WITHOUT_SUDO;
    const use = await this.tokens.use(caller);
    if (!use.allowed) return WITHOUT_SUDO;
    return use.last ? { sudo: true, use: { finish: () => this.tokens.revokeTree(caller.hash) } } : WITH_SUDO;
  }

  /**
   * Whether the caller holds sudo on the path when the ACL grants the operation (and sudo where
   * needed); undefined when it does not. A path any token may run is allowed here: its handler
   * checks the caller's ACL itself.
   */
  private allows(acl: AclDecider, request: ReadRequest, prepared: PreparedRequest): boolean | undefined {
    if (prepared.anyToken) return false;
    const decision = acl.allowOperation({ path: request.path, operation: prepared.operation, data: request.data, wrapTtl: request.wrapTtl });
    if (!decision.allowed || (prepared.sudo && !decision.sudo)) return undefined;
    return decision.sudo;
  }

  private async refuse(audit: RequestAudit): Promise<never> {
    const error = new PermissionDeniedError('permission denied');
    await audit.refused(error);
    throw error;
  }
}
