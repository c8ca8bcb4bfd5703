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
 * - **The plugin contract**: manifest, context, system view, the mount entry, the plugin's block
 *   of the configuration file ({@link PluginConfig}), and the services a plugin may have
 *   ({@link SERVICES}, typed tokens: `context.services.get(SERVICES.WasmCrypto)` needs no cast).
 *   Only the services listed there are reachable: they live in a container of their own, apart
 *   from the host's (storage below the barrier, the barrier itself).
 * - **Helpers**: the clock, CIDR and glob matching, the logger type, a lock per key for
 *   read-check-write sequences, bounded HTTP requests to the services a configuration names,
 *   giving the event loop back during long work, and strict base64 decoding.
 *
 * The WASM crypto core, and what bulk crypto answers are written with (transit's), are the
 * sub-path `keywarden/sdk/crypto` (`sdk/crypto.ts`).
 *
 * @packageDocumentation
 */
import { VERSION } from '../core/version.js';

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
  type SecretResult,
  type LeasedSecret,
  type SecretRequest,
  type SecretRenewal,
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
export { namedRecordPaths, type NamedRecordPaths } from '../core/framework/named-records.js';
export { ExactNumber, exactBody, parseExact, stringifyExact } from '../core/framework/exact-json.js';
export { globbedStringsMatch, globMatch } from '../core/framework/glob.js';
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
  createError,
  errorMessage,
  httpStatusOf,
  type ErrorClass,
} from '../core/errors.js';

// ---- Storage ----
export type { Storage, BatchOp } from '../storage/storage.js';

// ---- The plugin contract ----
export type { PluginKind, PluginConfig, PluginContext, PluginManifest, SystemView } from '../core/plugins/plugin.js';
export type { MountEntry, MountConfig, MountTableName } from '../core/mounts/mount-entry.js';
export type { DependencyContainer } from 'tsyringe';
export type { Token } from '../core/di/tokens.js';
export { SERVICES, type OperationMetrics, type PluginServices } from '../core/plugins/services.js';

// ---- Helpers ----
export { type Clock, systemClock } from '../core/clock.js';
export { cidrAllows } from '../core/auth/cidr.js';
export type { Logger } from 'pino';
export { nextTurn } from '../core/event-loop.js';
export { decodeBase64 } from '../core/tools/base64.js';
export { KeyedLock } from './keyed-lock.js';
export * from './token-fields.js';
export { outboundRequest, OutboundError, timeoutFromEnv, type OutboundRequest, type OutboundResponse } from './outbound-http.js';
