/**
 * The messages between the host and an isolated plugin's process, over its IPC channel with
 * Node's `advanced` serialization (the structured clone algorithm). Everything crossing is plain
 * data: the process never receives a host object, only its mount's snapshot and answers to its
 * own storage calls.
 */
import type { Operation, LogicalResponse, AuthResult, RequestAuth, MountRef } from '../../framework/request.js';
import type { PathHelp } from '../../framework/help.js';
import type { MountEntry } from '../../mounts/mount-entry.js';
import type { CloudAuthConfig } from '../../config/config.js';
import * as errors from '../../errors.js';
import { InternalError, KeywardenError } from '../../errors.js';

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
  /** The host services of the SDK's SERVICES that are plain values, as the host has them. */
  readonly services: { readonly cloudAuth?: CloudAuthConfig };
}

/** The system view's answers, sent again with every request so a tune is seen at once. */
export interface SystemValues {
  readonly defaultLeaseTtl: number;
  readonly maxLeaseTtl: number;
}

/** A logical request without its storage (the process supplies the remote one). */
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
  /** `sudo`: what authorization decided after `prepare`, as an in-process handler finds it in `req.auth`. */
  | { readonly method: 'execute'; readonly handle: number; readonly sudo: boolean }
  | { readonly method: 'renew'; readonly request: WireRequest; readonly auth: AuthResult; readonly system: SystemValues }
  | { readonly method: 'periodic'; readonly system: SystemValues }
  | { readonly method: 'cleanup' };

export type CallResult =
  | {
      readonly method: 'prepare';
      readonly handle: number;
      readonly operation: Operation;
      readonly pattern: string;
      readonly sudo: boolean;
      /** The user a login under user lockout names (PreparedRequest.lockoutUser). */
      readonly lockoutUser?: string;
    }
  | { readonly method: 'execute'; readonly response: LogicalResponse | null }
  | { readonly method: 'renew'; readonly auth: AuthResult }
  | { readonly method: 'periodic' | 'cleanup' };

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
  readonly hooks: { readonly periodic: boolean; readonly renew: boolean; readonly invalidate: boolean; readonly cleanup: boolean };
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
 * An error as it crosses: the name of the class of core/errors.ts it is (or descends from) and its
 * message. The classes are read from that module itself, so every error the host knows crosses as
 * itself, with the status it has in-process, and no second table can fall behind the first.
 */
export interface WireError {
  readonly class: string;
  readonly message: string;
}

type ErrorClass = new (message?: string) => KeywardenError;

/** Every error class core/errors.ts exports, by name. */
const CATALOGUE: ReadonlyMap<string, ErrorClass> = new Map(
  Object.entries(errors as Record<string, unknown>).filter(
    (pair): pair is [string, ErrorClass] => typeof pair[1] === 'function' && pair[1].prototype instanceof KeywardenError,
  ),
);

/** The nearest class of the catalogue an error is an instance of: a plugin's own subclass crosses as its parent. */
function catalogueClassOf(err: unknown): string | undefined {
  for (let proto = err instanceof Error ? Object.getPrototypeOf(err) : null; proto; proto = Object.getPrototypeOf(proto)) {
    const ctor = (proto as { constructor: ErrorClass }).constructor;
    if (CATALOGUE.get(ctor.name) === ctor) return ctor.name;
  }
  return undefined;
}

export function toWire(err: unknown): WireError {
  return { class: catalogueClassOf(err) ?? InternalError.name, message: err instanceof Error ? err.message : String(err) };
}

/**
 * The typed error for a wire error. An internal error keeps its message for the log only (a 500
 * says "internal error"), prefixed with who failed; a class this side does not know is one.
 */
export function fromWire(wire: WireError, internalPrefix: string): Error {
  const cls = CATALOGUE.get(wire.class);
  if (!cls || cls === InternalError) return new InternalError(`${internalPrefix}${wire.message}`);
  return new cls(wire.message);
}
