/**
 * Every error a request can end in, as a typed class. `httpStatusOf` is the one place that maps
 * them to HTTP; handlers throw, they never build status codes. Match errors by class, never by text.
 */
export abstract class KeywardenError extends Error {
  override readonly name: string = this.constructor.name;
}

/** 400: the request is malformed or asks for something the rules forbid. */
export class BadRequestError extends KeywardenError {}
/**
 * 400: a login's credentials are wrong (a password, a secret ID). The host counts it towards the
 * user lockout of the login's user (Vault's logical.ErrInvalidCredentials).
 */
export class InvalidCredentialsError extends BadRequestError {}
/** 403: missing/invalid token, or the policy does not allow this. */
export class PermissionDeniedError extends KeywardenError {
  constructor(message = 'permission denied') { super(message); }
}
/** 404 with a message (no mount, unknown path). */
export class NotFoundError extends KeywardenError {}
/** 405: the path exists but does not support this operation. */
export class UnsupportedOperationError extends KeywardenError {
  constructor(message = 'unsupported operation') { super(message); }
}
/** 409: e.g. a mount path already in use. */
export class ConflictError extends KeywardenError {}
/** 413: request body larger than max_request_size. */
export class PayloadTooLargeError extends KeywardenError {
  constructor(message = 'http: request body too large') { super(message); }
}
/** 415: PATCH without a merge-patch content type. */
export class UnsupportedMediaTypeError extends KeywardenError {}
/** 503: the barrier is sealed. */
export class SealedError extends KeywardenError {
  constructor() { super('Vault is sealed'); }
}
/** 503: a dependency (storage, upstream) is unavailable right now. */
export class UnavailableError extends KeywardenError {}
/**
 * 503: a write reached a node that is not the active one of an HA cluster. On a standby the host
 * catches it and forwards the request to the active node; a client sees it only when no active
 * node can be reached.
 */
export class NotActiveError extends UnavailableError {
  constructor(message = 'this node is not the active node') { super(message); }
}
/** 502: the cloud provider or another upstream answered with an error we cannot attribute to the user. */
export class UpstreamError extends KeywardenError {}
/**
 * 500: a broken invariant. The message is logged, never sent: the client sees only
 * "internal error".
 */
export class InternalError extends KeywardenError {}

/** Decryption of stored data failed: tampered or mis-keyed storage. Surfaces as 500. */
export class IntegrityError extends KeywardenError {}

/** The HTTP status for an error; anything not a KeywardenError is a 500. */
export function httpStatusOf(err: unknown): number {
  if (err instanceof BadRequestError) return 400;
  if (err instanceof PermissionDeniedError) return 403;
  if (err instanceof NotFoundError) return 404;
  if (err instanceof UnsupportedOperationError) return 405;
  if (err instanceof ConflictError) return 409;
  if (err instanceof PayloadTooLargeError) return 413;
  if (err instanceof UnsupportedMediaTypeError) return 415;
  if (err instanceof UpstreamError) return 502;
  if (err instanceof SealedError || err instanceof UnavailableError) return 503;
  return 500;
}

/** The text a client may see: 5xx internals stay in the log. */
export function publicMessageOf(err: unknown): string {
  const status = httpStatusOf(err);
  if (status >= 500 && !(err instanceof SealedError || err instanceof UnavailableError || err instanceof UpstreamError)) {
    return 'internal error';
  }
  return err instanceof Error ? err.message : String(err);
}
