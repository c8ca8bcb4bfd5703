/**
 * The enforcement point every logical request passes after routing and before its handler.
 * Today only the root policy grants anything; ACL policy evaluation plugs in here.
 */
import { PermissionDeniedError } from '../errors.js';
import type { RequestAuth } from '../framework/request.js';
import type { Operation } from '../framework/request.js';

export interface AuthorizationRequest {
  /** The full request path (mount prefix included). */
  readonly path: string;
  readonly operation: Operation;
  readonly sudo: boolean;
  readonly auth: RequestAuth | undefined;
  readonly unauthenticated: boolean;
}

export function authorize(request: AuthorizationRequest): void {
  if (request.unauthenticated) return;
  if (!request.auth) throw new PermissionDeniedError();
  if (request.auth.root) return;
  throw new PermissionDeniedError();
}
