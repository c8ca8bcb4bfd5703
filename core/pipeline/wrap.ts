/**
 * Stage 10, wrap: when the client sent X-Vault-Wrap-TTL, an answer with a body is kept in a new
 * single-use wrapping token's cubbyhole and the client gets only `wrap_info` — never the secret
 * beside it. An answer without a body (204, 404) has nothing to wrap and goes out as it is.
 */
import { BadRequestError } from '../errors.js';
import type { LogicalResponse } from '../framework/request.js';
import type { ResponseWrapper } from '../wrapping/wrapper.js';
import type { HostResponse, ReadRequest } from './types.js';

export class WrapStage {
  constructor(private readonly wrapper: ResponseWrapper) {}

  async wrap(request: ReadRequest, answer: HostResponse, response: LogicalResponse | null): Promise<HostResponse> {
    if (request.wrapTtl === undefined || answer.status !== 200 || answer.body === undefined) return answer;
    // A wrapped answer comes back from sys/wrapping/unwrap as JSON: text would lose its meaning.
    if (answer.contentType) throw new BadRequestError('this answer is not JSON and cannot be wrapped; send the request without X-Vault-Wrap-TTL');
    const accessor = response?.tokenAuth?.accessor;
    const info = await this.wrapper.wrap(answer.body, request.wrapTtl, request.path, typeof accessor === 'string' ? accessor : undefined);
    return {
      status: 200,
      body: { request_id: '', lease_id: '', renewable: false, lease_duration: 0, data: null, wrap_info: info, warnings: null, auth: null },
    };
  }
}
