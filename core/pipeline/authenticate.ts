/**
 * Stage 4, authenticate: the client token → its stored entry. A path that needs a token gets 403
 * for none, an unknown one, a used-up one, or one bound to other client addresses; a path that
 * needs none (login, health) ignores a bad token, as Vault does. A refused token is audited (its
 * HMAC, never the token), request and error, so token guessing leaves a trace.
 *
 * A token whose entry is cached is answered at once, without a turn of the event loop (most
 * requests carry a token used a moment ago); any other is looked up in storage.
 */
import { PermissionDeniedError } from '../errors.js';
import { cidrAllows } from '../auth/cidr.js';
import type { ResolvedToken, TokenStore } from '../auth/token-store.js';
import type { RequestAudit } from './audit.js';
import type { ReadRequest, Route, SealState } from './types.js';

type Caller = ResolvedToken | undefined;

/** A client token's entry: from the cache at once, or from storage. */
export type TokenLookup = Pick<TokenStore, 'lookupCached' | 'lookup'>;

export class AuthenticateStage {
  constructor(
    private readonly tokens: TokenLookup,
    private readonly barrier: SealState,
  ) {}

  /**
   * Whether the client token is one `authenticate` would admit from this address, audited nowhere:
   * the HTTP layer asks it before reading a body (body-allowance.ts), so that a request without a
   * usable token costs no more than its head. Rejects when the token cannot be looked up (the
   * storage is unavailable): that is not a verdict on the token.
   */
  usable(id: string | undefined, remoteAddress: string): boolean | Promise<boolean> {
    if (!id || this.barrier.sealed) return false;
    const cached = this.tokens.lookupCached(id);
    if (cached) return admits(cached, remoteAddress);
    return this.tokens.lookup(id).then((token) => token !== undefined && admits(token, remoteAddress));
  }

  authenticate(request: ReadRequest, route: Route, audit: RequestAudit): Caller | Promise<Caller> {
    const id = request.clientToken;
    if (!id || this.barrier.sealed) return this.without(route, audit);
    const cached = this.tokens.lookupCached(id);
    return cached ? this.admit(cached, request, route, audit) : this.lookUp(id, request, route, audit);
  }

  private async lookUp(id: string, request: ReadRequest, route: Route, audit: RequestAudit): Promise<Caller> {
    let token: ResolvedToken | undefined;
    try {
      token = await this.tokens.lookup(id);
    } catch (err) {
      // A path that needs no token (health, seal status, login) still answers when storage is down.
      if (!route.unauthenticated) throw err;
      return undefined;
    }
    return token ? this.admit(token, request, route, audit) : this.without(route, audit);
  }

  /** A live token: usable unless used up or bound to other client addresses. */
  private admit(token: ResolvedToken, request: ReadRequest, route: Route, audit: RequestAudit): Caller | Promise<Caller> {
    if (!admits(token, request.http.remoteAddress)) return this.without(route, audit);
    audit.caller = token;
    return token;
  }

  /** No usable token: fine for a path that needs none, refused for any other. */
  private without(route: Route, audit: RequestAudit): Caller | Promise<never> {
    return route.unauthenticated ? undefined : this.refuse(audit);
  }

  private async refuse(audit: RequestAudit): Promise<never> {
    const error = new PermissionDeniedError();
    await audit.refused(error);
    throw error;
  }
}

/** A live token is usable unless used up or bound to other client addresses. */
function admits(token: ResolvedToken, remoteAddress: string): boolean {
  return token.entry.numUses >= 0 && cidrAllows(token.entry.boundCidrs, remoteAddress);
}
