/**
 * The error catalogue: every error a request can end in is a class made by `createError`, which
 * gives it a stable code and its HTTP status, as fastify's lib/errors.js does
 * (https://github.com/fastify/fastify/blob/main/lib/errors.js). Turning an error into a status is
 * reading its field (`httpStatusOf`), never a ladder of `instanceof`; the isolated plugins' wire
 * format is rebuilt from the same catalogue (core/plugins/isolation/protocol.ts), and
 * docs/errors.md lists every code, kept in step by test/core/errors.test.ts. Handlers throw; they
 * never build status codes. Match errors by class, never by text.
 */

/** Everything the catalogue knows about one kind of error. */
export interface ErrorKind {
  /** Stable, upper-case, `KW_` first: logs and docs/errors.md name errors by it. */
  readonly code: string;
  readonly status: number;
  /**
   * Whether a client may read the message. Below 500 always; a 5xx's message is logged and the
   * client reads "internal error", unless its kind is about the server's state (sealed, a store or
   * provider unavailable), which the client is told.
   */
  readonly expose: boolean;
}

/**
 * The root of the catalogue. Its own kind is an internal error's, so a class that extends it
 * without `createError` answers 500 and keeps its message to the log.
 */
export abstract class KeywardenError extends Error implements ErrorKind {
  declare readonly code: string;
  declare readonly status: number;
  declare readonly expose: boolean;
  override readonly name: string = this.constructor.name;
}
Object.defineProperties(KeywardenError.prototype, {
  code: { value: 'KW_INTERNAL' },
  status: { value: 500 },
  expose: { value: false },
});

/** A class of the catalogue: constructed with an optional message, its kind readable without an instance. */
export interface ErrorClass {
  new (message?: string, options?: ErrorOptions): KeywardenError;
  readonly prototype: KeywardenError;
  readonly code: string;
  readonly status: number;
}

type AnyErrorClass = abstract new (...args: never[]) => KeywardenError;

const KINDS = new Map<string, ErrorClass>();

/**
 * Makes a class of the catalogue, named `name`, with its code and status. `message` is the text
 * when none is given; `parent` the class it refines (`instanceof` the parent keeps holding);
 * `expose` overrides the default (5xx hidden). A plugin makes its own the same way:
 * `export const QuotaError = createError('QuotaError', 'KW_MEMO_QUOTA', 409);` beside
 * `export type QuotaError = InstanceType<typeof QuotaError>;`.
 * @throws Error when the code is malformed or already taken (two kinds must never share one).
 */
export function createError(
  name: string,
  code: string,
  status: number,
  options: { readonly message?: string; readonly parent?: AnyErrorClass; readonly expose?: boolean } = {},
): ErrorClass {
  if (!/^KW_[A-Z0-9_]+$/.test(code)) throw new Error(`error code ${JSON.stringify(code)} must be KW_ and upper-case letters, digits and _`);
  if (KINDS.has(code)) throw new Error(`error code ${code} is already in the catalogue`);
  if (!Number.isInteger(status) || status < 400 || status > 599) throw new Error(`error code ${code}: status ${status} is not an HTTP error status`);
  const Parent = (options.parent ?? KeywardenError) as unknown as new (message?: string, cause?: ErrorOptions) => KeywardenError;
  const fallback = options.message;
  const made = class extends Parent {
    constructor(message: string | undefined = fallback, cause?: ErrorOptions) {
      super(message, cause);
    }
  };
  const kind = { code: { value: code }, status: { value: status } };
  Object.defineProperties(made.prototype, { ...kind, expose: { value: options.expose ?? status < 500 } });
  Object.defineProperties(made, { ...kind, name: { value: name } });
  const checked = made as unknown as ErrorClass;
  KINDS.set(code, checked);
  return checked;
}

/** The class of a code, if it is in this process's catalogue. */
export function errorClassOf(code: string): ErrorClass | undefined {
  return KINDS.get(code);
}

/** Every kind made so far, by code (the test that keeps docs/errors.md in step reads it). */
export function catalogue(): ReadonlyMap<string, ErrorClass> {
  return KINDS;
}

/** 400: the request is malformed or asks for something the rules forbid. */
export const BadRequestError = createError('BadRequestError', 'KW_BAD_REQUEST', 400);
export type BadRequestError = InstanceType<typeof BadRequestError>;
/**
 * 400: a login's credentials are wrong (a password, a secret ID). The host counts it towards the
 * user lockout of the login's user (Vault's logical.ErrInvalidCredentials).
 */
export const InvalidCredentialsError = createError('InvalidCredentialsError', 'KW_INVALID_CREDENTIALS', 400, { parent: BadRequestError });
export type InvalidCredentialsError = InstanceType<typeof InvalidCredentialsError>;
/** 403: missing/invalid token, or the policy does not allow this. */
export const PermissionDeniedError = createError('PermissionDeniedError', 'KW_PERMISSION_DENIED', 403, { message: 'permission denied' });
export type PermissionDeniedError = InstanceType<typeof PermissionDeniedError>;
/** 404 with a message (no mount, unknown path). */
export const NotFoundError = createError('NotFoundError', 'KW_NOT_FOUND', 404);
export type NotFoundError = InstanceType<typeof NotFoundError>;
/** 405: the path exists but does not support this operation. */
export const UnsupportedOperationError = createError('UnsupportedOperationError', 'KW_UNSUPPORTED_OPERATION', 405, { message: 'unsupported operation' });
export type UnsupportedOperationError = InstanceType<typeof UnsupportedOperationError>;
/** 409: e.g. a mount path already in use. */
export const ConflictError = createError('ConflictError', 'KW_CONFLICT', 409);
export type ConflictError = InstanceType<typeof ConflictError>;
/** 413: request body larger than max_request_size. */
export const PayloadTooLargeError = createError('PayloadTooLargeError', 'KW_PAYLOAD_TOO_LARGE', 413, { message: 'http: request body too large' });
export type PayloadTooLargeError = InstanceType<typeof PayloadTooLargeError>;
/** 415: PATCH without a merge-patch content type. */
export const UnsupportedMediaTypeError = createError('UnsupportedMediaTypeError', 'KW_UNSUPPORTED_MEDIA_TYPE', 415);
export type UnsupportedMediaTypeError = InstanceType<typeof UnsupportedMediaTypeError>;
/**
 * 503: the barrier is sealed. The text starts with Vault's, which the vault CLI looks for
 * (`strings.Contains(err.Error(), "Vault is sealed")`), and says what unseals it.
 */
export const SealedError = createError('SealedError', 'KW_SEALED', 503, {
  message: 'Vault is sealed: unseal Keywarden with "keywarden operator unseal" and a threshold of key shares',
  expose: true,
});
export type SealedError = InstanceType<typeof SealedError>;
/** 400: sys/init on a server that has its keys already; Vault's text first, as for SealedError. */
export const AlreadyInitializedError = createError('AlreadyInitializedError', 'KW_ALREADY_INITIALIZED', 400, {
  message: 'Vault is already initialized: this Keywarden server has its key shares; if it is sealed, unseal it with "keywarden operator unseal"',
  parent: BadRequestError,
});
export type AlreadyInitializedError = InstanceType<typeof AlreadyInitializedError>;
/** 503: a dependency (storage, upstream) is unavailable right now. */
export const UnavailableError = createError('UnavailableError', 'KW_UNAVAILABLE', 503, { expose: true });
export type UnavailableError = InstanceType<typeof UnavailableError>;
/**
 * 503: a write reached a node that is not the active one of an HA cluster. On a standby the host
 * catches it and forwards the request to the active node; a client sees it only when no active
 * node can be reached.
 */
export const NotActiveError = createError('NotActiveError', 'KW_NOT_ACTIVE', 503, {
  message: 'this node is not the active node',
  parent: UnavailableError,
  expose: true,
});
export type NotActiveError = InstanceType<typeof NotActiveError>;
/**
 * 504: the request ran past its listener's `max_request_duration`. Vault's text (its handlers see
 * Go's context error) comes first; Vault answers it with a 500, which hides that a setting, not a
 * fault, ended the request.
 */
export const DeadlineExceededError = createError('DeadlineExceededError', 'KW_DEADLINE_EXCEEDED', 504, {
  message: 'context deadline exceeded',
  expose: true,
});
export type DeadlineExceededError = InstanceType<typeof DeadlineExceededError>;
/** 502: the cloud provider or another upstream answered with an error we cannot attribute to the user. */
export const UpstreamError = createError('UpstreamError', 'KW_UPSTREAM', 502, { expose: true });
export type UpstreamError = InstanceType<typeof UpstreamError>;
/**
 * 500: a broken invariant. The message is logged, never sent: the client sees only
 * "internal error".
 */
export const InternalError = createError('InternalError', 'KW_INTERNAL', 500);
export type InternalError = InstanceType<typeof InternalError>;
/** 500: decryption of stored data failed (tampered or mis-keyed storage). */
export const IntegrityError = createError('IntegrityError', 'KW_INTEGRITY', 500);
export type IntegrityError = InstanceType<typeof IntegrityError>;

/** The HTTP status for an error; anything outside the catalogue is a 500. */
export function httpStatusOf(err: unknown): number {
  return err instanceof KeywardenError ? err.status : 500;
}

/** The text a client may see: a 5xx's internals stay in the log. */
export function publicMessageOf(err: unknown): string {
  return err instanceof KeywardenError && err.expose ? err.message : 'internal error';
}

/**
 * What a thrown value says, for a log line or a message that wraps it: an Error's message, or the
 * value as text (a library may throw a string).
 */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
