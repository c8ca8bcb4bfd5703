/**
 * The messages between the host and an isolated plugin's worker. Everything crossing is plain
 * data (structured clone): the worker never receives a host object, only its mount's snapshot
 * and answers to its own storage calls.
 */
import type { Operation, LogicalResponse, AuthResult, RequestAuth, MountRef } from '../../framework/request.js';
import type { PathHelp } from '../../framework/help.js';
import type { MountEntry } from '../../mounts/mount-entry.js';
import {
  BadRequestError,
  ConflictError,
  InternalError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  SealedError,
  UnavailableError,
  UnsupportedOperationError,
  UpstreamError,
} from '../../errors.js';

/** What the worker is started with (its `workerData`). */
export interface WorkerStart {
  /** file: URL of the module; the worker imports it under this URL with `source` as its text. */
  readonly entryUrl: string;
  /** The verified module text. */
  readonly source: string;
  /** file: URL the specifier `keywarden/sdk` resolves to: the host's own SDK. */
  readonly sdkUrl: string;
  /** What the module's manifest must declare. */
  readonly expected: { readonly name: string; readonly kind: 'secret' | 'auth'; readonly version: string };
  readonly mount: MountEntry;
  readonly system: SystemValues;
  readonly logLevel: string;
}

/** The system view's answers, sent again with every request so a tune is seen at once. */
export interface SystemValues {
  readonly defaultLeaseTtl: number;
  readonly maxLeaseTtl: number;
}

/** A logical request without its storage (the worker supplies the remote one). */
export interface WireRequest {
  readonly id: string;
  readonly operation: Operation;
  readonly path: string;
  readonly data: Record<string, unknown>;
  readonly mount: MountRef;
  readonly auth?: RequestAuth;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly connection: { readonly remoteAddress: string };
  readonly wrapTtl?: number;
}

export type HostCall =
  | { readonly method: 'prepare'; readonly request: WireRequest; readonly system: SystemValues }
  | { readonly method: 'execute'; readonly handle: number }
  | { readonly method: 'renew'; readonly request: WireRequest; readonly auth: AuthResult; readonly system: SystemValues }
  | { readonly method: 'periodic'; readonly system: SystemValues }
  | { readonly method: 'cleanup' };

export type CallResult =
  | { readonly method: 'prepare'; readonly handle: number; readonly operation: Operation; readonly pattern: string; readonly sudo: boolean }
  | { readonly method: 'execute'; readonly response: LogicalResponse | null }
  | { readonly method: 'renew'; readonly auth: AuthResult }
  | { readonly method: 'periodic' | 'cleanup' };

export type StorageOp =
  | { readonly op: 'get' | 'delete'; readonly key: string }
  | { readonly op: 'put'; readonly key: string; readonly value: Uint8Array }
  | { readonly op: 'list'; readonly prefix: string }
  | { readonly op: 'batch'; readonly ops: readonly ({ type: 'put'; key: string; value: Uint8Array } | { type: 'delete'; key: string })[] };

export type ToWorker =
  | { readonly t: 'call'; readonly id: number; readonly call: HostCall }
  | { readonly t: 'storage-result'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly t: 'storage-result'; readonly id: number; readonly ok: false; readonly error: WireError }
  | { readonly t: 'invalidate'; readonly key: string }
  | { readonly t: 'ping'; readonly seq: number };

export interface ReadyInfo {
  readonly description: string;
  readonly paths: readonly PathHelp[];
  readonly hooks: { readonly periodic: boolean; readonly renew: boolean; readonly invalidate: boolean; readonly cleanup: boolean };
}

export type FromWorker =
  | { readonly t: 'ready'; readonly info: ReadyInfo }
  | { readonly t: 'start-failed'; readonly error: WireError }
  | { readonly t: 'result'; readonly id: number; readonly ok: true; readonly value: CallResult }
  | { readonly t: 'result'; readonly id: number; readonly ok: false; readonly error: WireError }
  | { readonly t: 'storage'; readonly id: number; readonly request: StorageOp }
  | { readonly t: 'log'; readonly line: string }
  | { readonly t: 'pong'; readonly seq: number };

/** An error as it crosses: the class it is (by the classes of core/errors.ts) and its message. */
export interface WireError {
  readonly kind: ErrorKind;
  readonly message: string;
}

type ErrorKind =
  | 'bad-request' | 'permission-denied' | 'not-found' | 'unsupported-operation' | 'conflict'
  | 'payload-too-large' | 'upstream' | 'sealed' | 'unavailable' | 'internal';

/** Most specific first: SealedError is not an UnavailableError, but PluginError is a BadRequestError. */
const KINDS: readonly [ErrorKind, new (message: string) => Error][] = [
  ['bad-request', BadRequestError],
  ['permission-denied', PermissionDeniedError],
  ['not-found', NotFoundError],
  ['unsupported-operation', UnsupportedOperationError],
  ['conflict', ConflictError],
  ['payload-too-large', PayloadTooLargeError],
  ['upstream', UpstreamError],
  ['unavailable', UnavailableError],
];

export function toWire(err: unknown): WireError {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof SealedError) return { kind: 'sealed', message };
  for (const [kind, cls] of KINDS) if (err instanceof cls) return { kind, message };
  return { kind: 'internal', message };
}

/** The typed error for a wire error; `internal` keeps its message for the log only (a 500 says "internal error"). */
export function fromWire(wire: WireError, internalPrefix: string): Error {
  if (wire.kind === 'sealed') return new SealedError();
  if (wire.kind === 'internal') return new InternalError(`${internalPrefix}${wire.message}`);
  const found = KINDS.find(([kind]) => kind === wire.kind);
  return found ? new found[1](wire.message) : new InternalError(`${internalPrefix}${wire.message}`);
}
