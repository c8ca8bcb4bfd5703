/**
 * `keywarden/sdk`: everything a Keywarden plugin needs, and the only module a plugin imports from
 * Keywarden. The built-in plugins (`plugins/`) are written against it alone — a test fails if one
 * of them imports the host's internals — so it is known to be enough to write a secrets engine or
 * an auth method. It is versioned with the package: {@link SDK_VERSION} is the package version.
 *
 * A plugin module's default export is a {@link PluginManifest}. Its `factory` receives a
 * {@link PluginContext} for one mount and returns a backend, in practice a
 * {@link FrameworkBackend} built from {@link definePath} definitions:
 *
 * ```ts
 * import { FrameworkBackend, definePath, type PluginManifest } from 'keywarden/sdk';
 *
 * const manifest: PluginManifest = {
 *   name: 'hello', kind: 'secret', version: '1.0.0', description: 'Says hello.',
 *   factory: () => new FrameworkBackend({
 *     description: 'Says hello.',
 *     paths: [definePath({
 *       pattern: 'hello', fields: {}, synopsis: 'Greets.', description: 'Greets the caller.',
 *       operations: { read: { summary: 'Greet.', handler: async () => ({ data: { hello: 'world' } }) } },
 *     })],
 *   }),
 * };
 * export default manifest;
 * ```
 *
 * What is here and why:
 *
 * - **The path framework**: path definitions, field types with Vault's weak typing, the backend
 *   base class and its lifecycle hooks, the logical request and response, list answers, the
 *   parsers for Vault's booleans, integers and durations, and JSON numbers kept with every digit
 *   (`exactBody`, `ExactNumber`, `parseExact`, `stringifyExact`) for a backend that stores what
 *   clients send.
 * - **Errors**: the typed error classes; a handler throws one and the host maps it to the status.
 * - **Storage**: the interface of the mount's storage view (every key under the mount's UUID,
 *   behind the encrypting barrier).
 * - **The plugin contract**: manifest, context, system view, the mount entry, and the services a
 *   plugin may resolve from its container ({@link SERVICES}). Only the services listed there are
 *   reachable: the host's other injection tokens (storage below the barrier, the barrier itself)
 *   are private symbols a plugin never sees.
 * - **Helpers**: the clock, CIDR matching, the logger type, a lock per key for read-check-write
 *   sequences, giving the event loop back during long work, strict base64, and the ready-made
 *   hash and random paths (transit serves them, as the sys backend does under `sys/tools/`).
 * - **The WASM crypto core's types**: transit resolves the loaded core through
 *   {@link SERVICES}. It is a built-in service rather than a privilege of the built-ins: any
 *   plugin may use it.
 *
 * @packageDocumentation
 */
import { TOKENS } from '../core/di/tokens.js';
import { VERSION } from '../core/version.js';
import type { Metrics } from '../core/metrics/metrics.js';

/** The SDK's version: the Keywarden package's. A plugin may check it to refuse a host too old for it. */
export const SDK_VERSION: string = VERSION;

// ---- The path framework ----
export {
  definePath,
  type PathDefinition,
  type AnyPathDefinition,
  type Handler,
  type OperationSpec,
} from '../core/framework/path.js';
export {
  FrameworkBackend,
  type Backend,
  type BackendHooks,
  type FrameworkBackendOptions,
  type PreparedRequest,
} from '../core/framework/backend.js';
export {
  listResponse,
  type Operation,
  type LogicalRequest,
  type LogicalResponse,
  type RawResponse,
  type AuthResult,
  type RequestAuth,
  type MountRef,
} from '../core/framework/request.js';
export {
  CoercionError,
  coerceField,
  isUnset,
  parseBool,
  parseDurationSeconds,
  parseDurationExact,
  parseGoInt,
  goDuration,
  MAX_DURATION_SECONDS,
  afterDuration,
  type FieldType,
  type FieldTypeMap,
  type FieldSpec,
  type FieldSpecs,
  type FieldValues,
} from '../core/framework/fields.js';
export { asksNothing, refuseUnhonoured } from '../core/framework/refused-fields.js';
export { JsonText } from '../core/framework/json-text.js';
export { ExactNumber, exactBody, parseExact, stringifyExact } from '../core/framework/exact-json.js';
export { globbedStringsMatch } from '../core/framework/glob.js';
export type { PathHelp } from '../core/framework/help.js';

// ---- Errors ----
export {
  KeywardenError,
  BadRequestError,
  InvalidCredentialsError,
  PermissionDeniedError,
  NotFoundError,
  UnsupportedOperationError,
  ConflictError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  SealedError,
  UnavailableError,
  NotActiveError,
  UpstreamError,
  InternalError,
  IntegrityError,
  httpStatusOf,
} from '../core/errors.js';

// ---- Storage ----
export type { Storage, BatchOp } from '../storage/storage.js';

// ---- The plugin contract ----
export type { PluginKind, PluginContext, PluginManifest, SystemView } from '../core/plugins/plugin.js';
export type { MountEntry, MountConfig, MountTableName } from '../core/mounts/mount-entry.js';
export type { DependencyContainer } from 'tsyringe';
export type { CloudAuthConfig } from '../core/config/config.js';

/**
 * The host services a plugin may resolve from `context.container`, by these tokens:
 *
 * - `WasmCrypto`: the loaded {@link WasmCrypto} core (always registered by a server, for a plugin
 *   in-process and isolated alike; an isolated plugin's process loads its own);
 * - `CloudAuthConfig`: the server configuration's `cloud_auth` block ({@link CloudAuthConfig}),
 *   registered only when the configuration has one (check with `container.isRegistered(token, true)`);
 * - `Metrics`: where a plugin counts its operations for `sys/metrics` ({@link OperationMetrics}),
 *   registered only while the server collects metrics, and never for an isolated plugin, whose
 *   counts would stay in its own process (check with `isRegistered` too).
 *
 * ```ts
 * const wasm = context.container.resolve<WasmCrypto>(SERVICES.WasmCrypto);
 * ```
 */
export const SERVICES = {
  WasmCrypto: TOKENS.WasmCrypto,
  CloudAuthConfig: TOKENS.CloudAuthConfig,
  Metrics: TOKENS.Metrics,
} as const;

/**
 * The part of the server's metrics a plugin records into: one crypto operation request by
 * operation and key type, with its number of items (`keywarden_transit_operations_total`,
 * `keywarden_transit_batch_items`).
 */
export type OperationMetrics = Pick<Metrics, 'transit'>;

// ---- Helpers ----
export { type Clock, systemClock } from '../core/clock.js';
export { cidrAllows } from '../core/auth/cidr.js';
export type { Logger } from 'pino';
export { nextTurn } from '../core/event-loop.js';
export { BASE64_INVALID, decodeBase64 } from '../core/tools/base64.js';
export { HASH_ALGORITHMS, hashToolPath, type HashAlgorithmName, type NodeHashName } from '../core/tools/hash.js';
export { randomToolPaths } from '../core/tools/random.js';
export { KeyedLock } from './keyed-lock.js';
export * from './token-fields.js';

// ---- The WASM crypto core ----
export { WasmCrypto, bufferView, encodeRuns, type HashAlgorithm, type HmacAlgorithm } from '../wasm/index.js';
