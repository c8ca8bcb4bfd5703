/**
 * Stage 4, authenticate: the client token → its stored entry. A path that needs a token gets 403
 * for none, an unknown one, a used-up one, or one bound to other client addresses; a path that
 * needs none (login, health) ignores a bad token, as Vault does. A refused token is audited (its
 * HMAC, never the token), request and error, so token guessing leaves a trace.
 */
import { PermissionDeniedError } from '../errors.js';
import { cidrAllows } from '../auth/cidr.js';
import type { ResolvedToken, TokenStore } from '../auth/token-store.js';
import type { Barrier } from '../../storage/barrier.js';
import type { RequestAudit } from './audit.js';
import type { ReadRequest, Route } from './types.js';

export class AuthenticateStage {
  constructor(
    private readonly tokens: TokenStore,
    private readonly barrier: Barrier,
  ) {}

  async authenticate(request: ReadRequest, route: Route, audit: RequestAudit): Promise<ResolvedToken | undefined> {
    const id = request.clientToken;
    if (!id || this.barrier.sealed) {
      if (!route.unauthenticated) return this.refuse(audit);
      return undefined;
    }
    let token: ResolvedToken | undefined;
    try {
      token = await this.tokens.lookup(id);
    } catch (err) {
      // A path that needs no token (health, seal status, login) still answers when storage is down.
      if (!route.unauthenticated) throw err;
      return undefined;
    }
    const usable = token && token.entry.numUses >= 0 && cidrAllows(token.entry.boundCidrs, request.http.remoteAddress);
    if (!usable) {
      if (!route.unauthenticated) return this.refuse(audit);
      return undefined;
    }
    audit.caller = token;
    return token;
  }

  private async refuse(audit: RequestAudit): Promise<never> {
    const error = new PermissionDeniedError();
    await audit.refused(error);
    throw error;
  }
}
