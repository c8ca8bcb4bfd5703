/**
 * Stage 6, authorize: the caller's policies must grant the prepared operation on the full path
 * (and sudo where the path needs it); then one use of a limited-use token is spent. A token on its
 * last use is revoked once the request is done (`TokenUse.finish`).
 */
import { PermissionDeniedError } from '../errors.js';
import type { PreparedRequest } from '../framework/backend.js';
import type { RequestAuth } from '../framework/request.js';
import type { ResolvedToken, TokenStore } from '../auth/token-store.js';
import type { TokenAcls } from '../auth/token-acls.js';
import type { RequestAudit } from './audit.js';
import type { ReadRequest } from './types.js';

/** What authorizing spent: `finish` revokes a token whose last use this was. */
export interface TokenUse {
  finish(): Promise<void>;
}

const NO_USE: TokenUse = { finish: async () => {} };

export class AuthorizeStage {
  constructor(
    private readonly tokens: TokenStore,
    private readonly acls: TokenAcls,
  ) {}

  async authorize(request: ReadRequest, caller: ResolvedToken, auth: RequestAuth, prepared: PreparedRequest, audit: RequestAudit): Promise<TokenUse> {
    const acl = await this.acls.aclFor(caller.entry);
    const decision = acl.allowOperation({
      path: request.path,
      operation: prepared.operation,
      data: request.data,
      ...(request.wrapTtl !== undefined ? { wrapTtl: request.wrapTtl } : {}),
    });
    if (!decision.allowed || (prepared.sudo && !decision.sudo)) {
      const error = new PermissionDeniedError('permission denied');
      await audit.refused(error);
      throw error;
    }
    auth.sudo = decision.sudo;
    const use = await this.tokens.use(caller);
    if (!use.allowed) throw new PermissionDeniedError();
    return use.last ? { finish: () => this.tokens.revokeTree(caller.hash) } : NO_USE;
  }
}
