/**
 * Stage 10, wrap: when the client sent X-Vault-Wrap-TTL, an answer with a body is kept in a new
 * single-use wrapping token's cubbyhole and the client gets only `wrap_info` — never the secret
 * beside it. An answer without a body (204, 404) has nothing to wrap and goes out as it is.
 *
 * Only the answer of a path that needs a token, or a login's, is wrapped: a wrapping token is
 * stored, so a path anyone may call without a token (health, seal status, init, wrapping lookup)
 * would otherwise let anonymous clients fill the store with tokens, and sys/init would initialize
 * the store and then lose its keys when wrapping failed while sealed. Vault serves those paths
 * from handlers that never wrap. Outside auth mounts that is refused before the request runs
 * (`check`); on an auth mount's paths that need no token, an answer that is not a login's is
 * refused before anything is stored (`wrap`).
 */
import { BadRequestError } from '../errors.js';
import type { LogicalResponse } from '../framework/request.js';
import type { ResponseWrapper, WrapInfo } from '../wrapping/wrapper.js';
import type { HostResponse, ReadRequest, Route } from './types.js';

/** The answer the client gets, and the wrap_info when the answer was wrapped. */
export interface Wrapped {
  readonly answer: HostResponse;
  readonly info?: WrapInfo;
}

/** Keeping an answer in a new wrapping token's cubbyhole. */
export type AnswerWrapper = Pick<ResponseWrapper, 'wrap'>;

export class WrapStage {
  constructor(private readonly wrapper: AnswerWrapper) {}

  /** Refuses X-Vault-Wrap-TTL on a path that needs no token, but for a login's answer. */
  check(request: ReadRequest, route: Route): void {
    if (request.wrapTtl === undefined || !route.unauthenticated || route.live?.entry.table === 'auth') return;
    throw unwrappable(request);
  }

  async wrap(request: ReadRequest, route: Route, answer: HostResponse, response: LogicalResponse | null): Promise<Wrapped> {
    if (request.wrapTtl === undefined || answer.status !== 200 || answer.body === undefined) return { answer };
    if (route.unauthenticated && !response?.tokenAuth) throw unwrappable(request);
    // A wrapped answer comes back from sys/wrapping/unwrap as JSON: text would lose its meaning.
    if (answer.contentType) throw new BadRequestError('this answer is not JSON and cannot be wrapped; send the request without X-Vault-Wrap-TTL');
    const accessor = response?.tokenAuth?.accessor;
    const info = await this.wrapper.wrap(answer.body, request.wrapTtl, request.path, typeof accessor === 'string' ? accessor : undefined);
    return {
      answer: {
        status: 200,
        body: { request_id: '', lease_id: '', renewable: false, lease_duration: 0, data: null, wrap_info: info, warnings: null, auth: null },
      },
      info,
    };
  }
}

function unwrappable(request: ReadRequest): BadRequestError {
  return new BadRequestError(
    `header X-Vault-Wrap-TTL: ${request.path} answers without a token, and only a login's answer is wrapped there; send the request without the header`,
  );
}
