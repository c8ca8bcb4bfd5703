/**
 * Before stage 1, body allowance: how much of a request's body the HTTP layer may read, decided
 * from its head alone. A path that needs a token gets its body read (up to `max_request_size`)
 * only when the request carries a usable token; without one it is answered 403 without a byte of
 * its body read, parsed or hashed for the audit log. A path that needs no token (login, init,
 * unseal, wrapping lookup) takes a small body (`max_unauthenticated_request_size`). So what a
 * client without a token can make the server do is bounded by that small size, whatever it sends:
 * reading, parsing and audit-hashing a 20 MB body once stalled every other client for seconds.
 */
import { FORWARDED_FOR } from '../ha/forward.js';
import type { AuthenticateStage } from './authenticate.js';
import { tokenOf } from './read.js';
import type { RouteStage } from './route.js';
import type { HostRequest } from './types.js';

/**
 * `authenticated`: the request carries a usable token, its body may be as large as the listener
 * allows; `unauthenticated`: the path needs no token (or could not be routed here), its body must
 * be small; `none`: the path needs a token the request does not carry, so it will be refused and
 * its body is not read at all.
 */
export type BodyAllowance = 'authenticated' | 'unauthenticated' | 'none';

/** What the allowance is decided from: the request line and headers. */
export type RequestHead = Pick<HostRequest, 'path' | 'headers' | 'remoteAddress' | 'unauthenticatedMetrics'>;

export class BodyAllowanceStage {
  constructor(
    private readonly routes: RouteStage,
    private readonly authentication: AuthenticateStage,
    /** HA: a request forwarded by a standby is checked against the client address it vouches for. */
    private readonly forwarding: boolean,
  ) {}

  allowance(head: RequestHead): BodyAllowance | Promise<BodyAllowance> {
    let unauthenticated: boolean | undefined;
    try {
      const route = this.routes.route(head.path, head.unauthenticatedMetrics === true);
      unauthenticated = route.unauthenticated;
      route.release();
    } catch {
      // Sealed, or no such mount here: the pipeline answers that, or (a standby without the mount
      // table yet) forwards the request with its body. Bounded as if the path needed no token.
    }
    if (unauthenticated === true) return 'unauthenticated';
    // Unverified until the pipeline checks the forwarding MAC, and only used to size the read: a
    // client naming another address still needs a token bound to it.
    const vouched = this.forwarding ? head.headers[FORWARDED_FOR] : undefined;
    const address = typeof vouched === 'string' ? vouched : head.remoteAddress;
    const usable = this.authentication.usable(tokenOf(head), address);
    const refused: BodyAllowance = unauthenticated === false ? 'none' : 'unauthenticated';
    // A token that could not be looked up (the storage is down) is sized as a request without one:
    // the pipeline then answers 503, and a forwarded request keeps the bytes its MAC covers.
    return usable instanceof Promise
      ? usable.then((ok) => (ok ? 'authenticated' : refused), () => 'unauthenticated')
      : usable ? 'authenticated' : refused;
  }
}
