/**
 * The messages between the host and an isolated plugin's process, over its IPC channel with
 * Node's `advanced` serialization (the structured clone algorithm). Everything crossing is plain
 * data: the process never receives a host object, only its mount's snapshot and answers to its
 * own storage calls.
 */
import type { Operation, LogicalResponse, AuthResult, RequestAuth, RequestCaller, MountRef, LeasedSecret, SecretRenewal, SecretRequest } from '../../framework/request.js';
import type { PreparedRequest } from '../../framework/backend.js';
import type { PathHelp } from '../../framework/help.js';
import type { MountEntry } from '../../mounts/mount-entry.js';
import type { PluginConfig } from '../plugin.js';
import { InternalError, KeywardenError, errorClassOf, errorMessage } from '../../errors.js';

/** The exit code of a plugin process ended by an uncaught error (sysexits.h's EX_SOFTWARE). */
export const CRASH_EXIT_CODE = 70;
/** The exit code of a plugin process that found itself started without the permission model. */
export const UNCONFINED_EXIT_CODE = 78;

/** The first message to a new process: what it loads, for which mount. */
export interface PluginStart {
  /** file: URL of the module; the process imports it under this URL with `source` as its text. */
  readonly entryUrl: string;
  /** The verified module text (the file itself is never read by the process). */
  readonly source: string;
  /** What the module's manifest must declare. */
  readonly expected: { readonly name: string; readonly kind: 'secret' | 'auth'; readonly version: string };
  readonly mount: MountEntry;
  readonly system: SystemValues;
  readonly logLevel: string;
  /** The plugin's block of the configuration file (plain values). */
  readonly config: PluginConfig;
}

/** The system view's answers, sent again with every request so a tune is seen at once. */
export interface SystemValues {
  readonly defaultLeaseTtl: number;
  readonly maxLeaseTtl: number;
}

/**
 * A request target (what `prepare` sees) without its storage, which the process supplies as the
 * remote one, and without the client token, which a plugin's process never gets.
 */
export interface WireTarget {
  readonly id: string;
  readonly operation: Operation;
  readonly path: string;
  readonly data: Record<string, unknown>;
  readonly mount: MountRef;
  readonly auth?: RequestCaller;
}

/** An authorized logical request, likewise without storage and client token; the mount's passthrough headers only. */
export interface WireRequest extends WireTarget {
  readonly auth?: RequestAuth;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly connection: { readonly remoteAddress: string };
  readonly wrapTtl?: number;
}

/** A secret's renewal or revocation request, without its storage (the process supplies the remote one). */
export type WireSecretRequest = Omit<SecretRequest, 'storage'>;

export type HostCall =
  | { readonly method: 'prepare'; readonly target: WireTarget; readonly system: SystemValues }
  /** The request as authorized and what `prepare` answered for it, sent back as it came. */
  | { readonly method: 'execute'; readonly request: WireRequest; readonly prepared: PreparedRequest; readonly system: SystemValues }
  | { readonly method: 'renew'; readonly request: WireRequest; readonly auth: AuthResult; readonly system: SystemValues }
  | { readonly method: 'renew-secret' | 'revoke-secret'; readonly request: WireSecretRequest; readonly secret: LeasedSecret; readonly system: SystemValues }
  | { readonly method: 'periodic'; readonly system: SystemValues }
  | { readonly method: 'cleanup' };

export type CallResult =
  | { readonly method: 'prepare'; readonly prepared: PreparedRequest }
  | { readonly method: 'execute'; readonly response: LogicalResponse | null }
  | { readonly method: 'renew'; readonly auth: AuthResult }
  | { readonly method: 'renew-secret'; readonly renewal: SecretRenewal }
  | { readonly method: 'revoke-secret' | 'periodic' | 'cleanup' };

export type StorageOp =
  | { readonly op: 'get' | 'delete'; readonly key: string }
  | { readonly op: 'put'; readonly key: string; readonly value: Uint8Array }
  | { readonly op: 'list'; readonly prefix: string }
  | { readonly op: 'batch'; readonly ops: readonly ({ type: 'put'; key: string; value: Uint8Array } | { type: 'delete'; key: string })[] };

export type ToPlugin =
  | { readonly t: 'start'; readonly start: PluginStart }
  | { readonly t: 'call'; readonly id: number; readonly call: HostCall }
  | { readonly t: 'storage-result'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly t: 'storage-result'; readonly id: number; readonly ok: false; readonly error: WireError }
  | { readonly t: 'invalidate'; readonly key: string }
  | { readonly t: 'ping'; readonly seq: number };

export interface ReadyInfo {
  readonly description: string;
  readonly paths: readonly PathHelp[];
  readonly hooks: {
    readonly periodic: boolean;
    readonly renew: boolean;
    readonly renewSecret: boolean;
    readonly revokeSecret: boolean;
    readonly invalidate: boolean;
    readonly cleanup: boolean;
  };
}

export type FromPlugin =
  | { readonly t: 'ready'; readonly info: ReadyInfo }
  | { readonly t: 'start-failed'; readonly error: WireError }
  | { readonly t: 'result'; readonly id: number; readonly ok: true; readonly value: CallResult }
  | { readonly t: 'result'; readonly id: number; readonly ok: false; readonly error: WireError }
  | { readonly t: 'storage'; readonly id: number; readonly request: StorageOp }
  | { readonly t: 'log'; readonly line: string }
  | { readonly t: 'pong'; readonly seq: number };

/**
 * An error as it crosses: the codes of the catalogue (core/errors.ts) it carries, its own first
 * and then its parents', and its message. The side that rebuilds it takes the first code its own
 * catalogue holds, so an error keeps its class and status across the boundary — a plugin's own
 * kind (made with `createError`) crosses as the nearest kind the host knows — and no second table
 * can fall behind the first.
 */
export interface WireError {
  readonly codes: readonly string[];
  readonly message: string;
}

/** The catalogue codes along an error's prototype chain, most specific first. */
function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  if (!(err instanceof KeywardenError)) return codes;
  for (let proto = Object.getPrototypeOf(err) as object | null; proto && proto !== KeywardenError.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    const own = Object.getOwnPropertyDescriptor(proto, 'code');
    if (own && typeof own.value === 'string' && errorClassOf(own.value)?.prototype === proto) codes.push(own.value);
  }
  return codes;
}

export function toWire(err: unknown): WireError {
  return { codes: codesOf(err), message: errorMessage(err) };
}

/**
 * The typed error for a wire error. A message no client reads (an internal error's) is prefixed
 * with who failed, for the log; codes this side does not know make an internal error.
 */
export function fromWire(wire: WireError, internalPrefix: string): Error {
  const codes: unknown[] = Array.isArray(wire.codes) ? wire.codes : [];
  const message = String(wire.message);
  for (const code of codes) {
    const known = typeof code === 'string' ? errorClassOf(code) : undefined;
    if (known) return new known(known.prototype.expose ? message : `${internalPrefix}${message}`);
  }
  return new InternalError(`${internalPrefix}${message}`);
}
