/**
 * Requests sent straight to a backend, without HTTP or tokens, the way the pipeline sends them:
 * `prepare` with the request target, then `execute` with the request as authorized (frozen, its
 * operation the prepared one).
 */
import type { Backend, PreparedRequest } from '../../core/framework/backend.js';
import type { LogicalRequest, LogicalResponse, MountRef, Operation, RequestAuth } from '../../core/framework/request.js';
import type { Storage } from '../../storage/storage.js';

export interface DirectRequest {
  readonly operation: Operation;
  readonly path: string;
  readonly data?: Record<string, unknown>;
  readonly storage: Storage;
  readonly mount: MountRef;
  readonly id?: string;
  readonly clientToken?: string;
  /** The caller; `sudo` is what authorization would decide. */
  readonly auth?: RequestAuth;
  readonly headers?: Record<string, string | string[] | undefined>;
}

/** The request a handler would get once `prepared` was authorized. */
export function authorizedRequest(request: DirectRequest, prepared: PreparedRequest): LogicalRequest {
  return Object.freeze({
    id: request.id ?? 'req-1',
    operation: prepared.operation,
    path: request.path,
    data: request.data ?? {},
    storage: request.storage,
    mount: request.mount,
    ...(request.clientToken !== undefined ? { clientToken: request.clientToken } : {}),
    ...(request.auth ? { auth: request.auth } : {}),
    headers: request.headers ?? {},
    connection: { remoteAddress: '127.0.0.1' },
  });
}

/** Prepares a request (the existence check may turn `update` into `create`). */
export async function prepareRequest(backend: Backend, request: DirectRequest): Promise<PreparedRequest> {
  const { auth, ...rest } = request;
  return backend.prepare({ id: 'req-1', data: {}, ...rest, ...(auth ? { auth: withoutSudo(auth) } : {}) });
}

/** Prepares and executes one request; the prepared request comes back beside the response. */
export async function sendDirect(backend: Backend, request: DirectRequest): Promise<{ prepared: PreparedRequest; response: LogicalResponse | null }> {
  const prepared = await prepareRequest(backend, request);
  return { prepared, response: await backend.execute(authorizedRequest(request, prepared), prepared) };
}

function withoutSudo(auth: RequestAuth): Omit<RequestAuth, 'sudo'> {
  const { sudo: _sudo, ...caller } = auth;
  return caller;
}
